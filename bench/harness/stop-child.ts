// Ending a process the benchmark started, with a grace before SIGKILL.
import type { ChildProcess } from 'node:child_process';

/** Stops a child: a signal (or none, if it was asked to stop), SIGKILL after the grace. */
export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals | undefined,
  graceMs = 15_000,
): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (signal) child.kill(signal);
  });
}
