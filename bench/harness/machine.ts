// The machine a figure was measured on, as the figures name it.
import os from 'node:os';

/** The machine, as the figures should name it. */
export function machineName(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return `${cpus.length} × ${model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

export function cpuCount(): number {
  return os.cpus().length;
}
