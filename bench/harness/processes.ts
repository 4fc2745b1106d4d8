// The processes a benchmark starts (peers, kube-scheduler): logged to a file, killed if the
// benchmark is interrupted, and stopped with a grace before SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { onInterrupt } from './interrupt.js';

/** A process of ours, logged to a file, killed if the benchmark is interrupted. */
export function startLogged(
  binary: string,
  args: string[],
  logPath: string,
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  const forget = onInterrupt(() => stopChild(child, 'SIGKILL'));
  child.once('exit', forget);
  const logFile = createWriteStream(logPath);
  child.stdout?.pipe(logFile);
  child.stderr?.pipe(logFile);
  return child;
}

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
