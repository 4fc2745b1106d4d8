// The exec runner: runs one tool's argv (from a driver's execArgv) without a shell, streams its
// output as it comes and then its exit code, and stops it when the caller goes away (AbortSignal),
// its time is up (EXEC_TIMEOUT) or its lease ends (LEASE_LOST: the device is about to be
// reclaimed). The exec server maps these events to Server-Sent Events (DESIGN.md §6: output,
// exit, error).
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import { systemClock, type Clock, type TimerHandle } from '../runtime/index.js';

export type ExecEvent =
  | { type: 'output'; stream: 'stdout' | 'stderr'; data: string }
  | { type: 'exit'; exitCode: number }
  | {
      type: 'error';
      code: 'EXEC_TIMEOUT' | 'LEASE_LOST' | 'UNAVAILABLE' | 'INTERNAL';
      message: string;
    };

export type ExecResult =
  | { kind: 'exited'; exitCode: number }
  | { kind: 'timed-out' }
  | { kind: 'lease-lost' }
  | { kind: 'aborted' }
  | { kind: 'failed-to-start'; message: string };

export interface ExecOptions {
  /** Aborting stops the process (the client disconnected); no more events follow. */
  signal?: AbortSignal;
  /**
   * Aborted when the lease ends: the process is stopped and the last event is LEASE_LOST with the
   * signal's reason as its message (its output up to then still comes). A reason that is an
   * ExecStopReason says its own code: UNAVAILABLE when the device crashed and is booted again
   * under the same lease (the lease goes on; running-execs.ts).
   */
  leaseEnded?: AbortSignal;
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** Between SIGTERM and SIGKILL when the lease ends (the next holder waits for the device). */
  leaseEndGraceMs?: number;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** base64: each chunk's bytes as they came (binary output); utf8 (default): text. */
  encoding?: 'utf8' | 'base64';
  /** Called once the process is gone (its streams closed), or could not start. */
  onExited?: () => void;
}

/** Why execs were stopped when it is not their lease ending (a device that crashed). */
export interface ExecStopReason {
  code: 'LEASE_LOST' | 'UNAVAILABLE';
  message: string;
}

/** The default of `leaseEndGraceMs`. */
export const LEASE_END_GRACE_MS = 1000;

export interface ExecHandle {
  readonly pid: number | undefined;
  readonly done: Promise<ExecResult>;
}

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}

/**
 * Starts `argv` and calls `onEvent` for each output chunk, then once with exit or error. The tool
 * runs in its own process group, so stopping it also stops what it started (xcrun → simctl → …).
 */
export function startExec(
  argv: readonly [string, ...string[]],
  options: ExecOptions,
  onEvent: (event: ExecEvent) => void,
): ExecHandle {
  const clock = options.clock ?? systemClock();
  const [file, ...args] = argv;
  const child = spawn(file, args, {
    env: options.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    windowsHide: true,
  });

  let stopping: 'timeout' | 'abort' | 'lease-ended' | undefined;
  let timeoutTimer: TimerHandle | undefined;
  let killTimer: TimerHandle | undefined;

  const signalGroup = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  const stop = (why: 'timeout' | 'abort' | 'lease-ended'): void => {
    if (stopping !== undefined) return;
    stopping = why;
    signalGroup('SIGTERM');
    const graceMs =
      why === 'lease-ended'
        ? (options.leaseEndGraceMs ?? LEASE_END_GRACE_MS)
        : (options.killGraceMs ?? 2000);
    killTimer = clock.setTimeout(() => signalGroup('SIGKILL'), graceMs);
  };
  const onAbort = (): void => stop('abort');
  const onLeaseEnded = (): void => stop('lease-ended');

  const done = new Promise<ExecResult>((resolve) => {
    let settled = false;
    const finish = (result: ExecResult, event?: ExecEvent): void => {
      if (settled) return;
      settled = true;
      if (timeoutTimer !== undefined) clock.clearTimeout(timeoutTimer);
      if (killTimer !== undefined) clock.clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
      options.leaseEnded?.removeEventListener('abort', onLeaseEnded);
      options.onExited?.();
      if (event !== undefined) onEvent(event);
      resolve(result);
    };

    for (const stream of ['stdout', 'stderr'] as const) {
      const decoder = new StringDecoder('utf8');
      const base64 = options.encoding === 'base64';
      child[stream].on('data', (chunk: Buffer) => {
        const data = base64 ? chunk.toString('base64') : decoder.write(chunk);
        if (data.length > 0 && stopping !== 'abort') onEvent({ type: 'output', stream, data });
      });
      child[stream].on('end', () => {
        const rest = base64 ? '' : decoder.end();
        if (rest.length > 0 && stopping !== 'abort')
          onEvent({ type: 'output', stream, data: rest });
      });
    }

    child.once('error', (error) => {
      finish(
        { kind: 'failed-to-start', message: error.message },
        { type: 'error', code: 'INTERNAL', message: `could not run ${file}: ${error.message}` },
      );
    });
    child.once('close', (code, signal) => {
      if (stopping === 'abort') return finish({ kind: 'aborted' });
      if (stopping === 'lease-ended') {
        const reason: unknown = options.leaseEnded?.reason;
        const stopped = reason as Partial<ExecStopReason> | undefined;
        const code = stopped?.code === 'UNAVAILABLE' ? 'UNAVAILABLE' : 'LEASE_LOST';
        const message =
          typeof reason === 'string'
            ? reason
            : typeof stopped?.message === 'string'
              ? stopped.message
              : 'the lease ended; the tool was stopped';
        return finish({ kind: 'lease-lost' }, { type: 'error', code, message });
      }
      if (stopping === 'timeout') {
        return finish(
          { kind: 'timed-out' },
          {
            type: 'error',
            code: 'EXEC_TIMEOUT',
            message: `${file} ran past its ${options.timeoutMs} ms and was stopped`,
          },
        );
      }
      // A tool killed by a signal exits 128 + its number, as a shell would say.
      const exitCode = code ?? (signal ? 128 + signalNumber(signal) : 1);
      finish({ kind: 'exited', exitCode }, { type: 'exit', exitCode });
    });
  });

  if (options.signal?.aborted) stop('abort');
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.leaseEnded?.aborted) stop('lease-ended');
  else options.leaseEnded?.addEventListener('abort', onLeaseEnded, { once: true });
  if (options.timeoutMs !== undefined) {
    timeoutTimer = clock.setTimeout(() => stop('timeout'), options.timeoutMs);
  }
  return { pid: child.pid, done };
}

/**
 * The same as an async iterable: output events, then one exit or error. Leaving the loop early
 * (break, return, throw) stops the process.
 */
export async function* execStream(
  argv: readonly [string, ...string[]],
  options: ExecOptions = {},
): AsyncGenerator<ExecEvent, ExecResult | undefined> {
  const stopper = new AbortController();
  const onOuterAbort = (): void => stopper.abort();
  if (options.signal?.aborted) stopper.abort();
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });

  const queue: ExecEvent[] = [];
  let wake: (() => void) | undefined;
  const handle = startExec(argv, { ...options, signal: stopper.signal }, (event) => {
    queue.push(event);
    wake?.();
  });
  let result: ExecResult | undefined;
  void handle.done.then((value) => {
    result = value;
    wake?.();
  });

  try {
    for (;;) {
      const event = queue.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (result !== undefined) return result;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    options.signal?.removeEventListener('abort', onOuterAbort);
    if (result === undefined) {
      stopper.abort();
      await handle.done;
    }
  }
}
