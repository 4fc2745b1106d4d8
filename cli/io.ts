// The plugin's contact with its process: output streams, the terminal, the clock and signals.
// Commands get it as an argument so that tests can run them in-process.

export type StopSignal = 'SIGINT' | 'SIGTERM';

export interface CliIO {
  /** One line on stdout: results. */
  out(line: string): void;
  /** One line on stderr: progress, warnings and errors. */
  err(line: string): void;
  /** Raw text on stderr (the live display's terminal codes). */
  writeErr(text: string): void;
  /** stderr is a terminal: the live display redraws in place. */
  readonly stderrIsTTY: boolean;
  /** Width of that terminal, when it is one. */
  readonly columns: number | undefined;
  now(): number;
  /** Calls `handler` on Ctrl-C (SIGINT) or SIGTERM instead of dying; answers the unsubscribe. */
  onStop(handler: (signal: StopSignal) => void): () => void;
}

/** A command's body: parsed arguments in, exit code out. */
export type Action = (argv: Record<string, unknown>, io: CliIO) => Promise<number>;

export function processIO(): CliIO {
  return {
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
    writeErr: (text) => process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
    columns: process.stderr.isTTY === true ? process.stderr.columns : undefined,
    now: () => Date.now(),
    onStop(handler) {
      // The first signal asks the command to stop cleanly; a second one ends the process at once.
      let stopping = false;
      const on = (signal: StopSignal) => {
        if (stopping) process.exit(signal === 'SIGTERM' ? 143 : 130);
        stopping = true;
        handler(signal);
      };
      const onInt = () => on('SIGINT');
      const onTerm = () => on('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      return () => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
      };
    },
  };
}

/** An IO that records what a command printed (tests). */
export class RecordingIO implements CliIO {
  readonly stdout: string[] = [];
  readonly stderr: string[] = [];
  readonly stderrIsTTY: boolean;
  readonly columns: number | undefined;
  private readonly stopHandlers = new Set<(signal: StopSignal) => void>();
  private readonly clock: () => number;

  constructor(options: { now?: () => number; tty?: boolean; columns?: number } = {}) {
    this.clock = options.now ?? (() => Date.now());
    this.stderrIsTTY = options.tty ?? false;
    this.columns = options.columns;
  }

  out(line: string): void {
    this.stdout.push(line);
  }
  err(line: string): void {
    this.stderr.push(line);
  }
  writeErr(text: string): void {
    this.stderr.push(text);
  }
  now(): number {
    return this.clock();
  }
  onStop(handler: (signal: StopSignal) => void): () => void {
    this.stopHandlers.add(handler);
    return () => this.stopHandlers.delete(handler);
  }
  /** Delivers a signal as the terminal would. */
  stop(signal: StopSignal = 'SIGINT'): void {
    for (const handler of [...this.stopHandlers]) handler(signal);
  }
}
