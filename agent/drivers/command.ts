// How drivers run their tools: argv through execFile, never a shell, with a timeout and bounded
// output. Drivers take a CommandRunner so the daemon can pass its environment (PATH, DEVELOPER_DIR)
// and tests can point PATH at stand-in executables.
import { execFile, spawn } from 'node:child_process';
import { DriverError } from './driver.js';

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface CommandOptions {
  timeoutMs?: number;
  /** Variables set over the runner's environment for this call only (ANDROID_AVD_HOME, …). */
  env?: NodeJS.ProcessEnv;
  /**
   * Written to the tool's stdin, which is then closed (a tool that asks a question, such as
   * avdmanager's "custom hardware profile? [no]", gets its answer and never waits on an open pipe).
   */
  input?: string;
}

export type CommandRunner = (
  argv: readonly [string, ...string[]],
  options?: CommandOptions,
) => Promise<CommandResult>;

export interface CommandRunnerOptions {
  /** The environment tools run in; its PATH is also where the tool is looked up. */
  env?: NodeJS.ProcessEnv;
  defaultTimeoutMs?: number;
  /** Tool output beyond this is an error, not a memory spike. */
  maxOutputBytes?: number;
}

/**
 * A runner that resolves with the exit code (a non-zero exit is an answer, not an error) and
 * rejects only when the tool could not run, ran too long, or printed too much.
 */
export function createCommandRunner(options: CommandRunnerOptions = {}): CommandRunner {
  const baseEnv = options.env ?? process.env;
  const maxBuffer = options.maxOutputBytes ?? 32 * 1024 * 1024;
  return (argv, commandOptions = {}) => {
    const [file, ...args] = argv;
    const timeout = commandOptions.timeoutMs ?? options.defaultTimeoutMs ?? 60_000;
    const env = commandOptions.env === undefined ? baseEnv : { ...baseEnv, ...commandOptions.env };
    return new Promise((resolve, reject) => {
      const child = execFile(
        file,
        args,
        { env, timeout, maxBuffer, encoding: 'utf8', windowsHide: true },
        (error, stdout, stderr) => {
          if (error === null) {
            resolve({ exitCode: 0, stdout, stderr });
            return;
          }
          const code: unknown = error.code;
          if (typeof code === 'number' && !error.killed) {
            resolve({ exitCode: code, stdout, stderr });
            return;
          }
          const reason =
            code === 'ENOENT'
              ? 'not found on PATH'
              : error.killed
                ? `stopped after ${timeout} ms`
                : error.message;
          reject(new DriverError(`${argv.join(' ')}: ${reason}`, { cause: error }));
        },
      );
      if (commandOptions.input !== undefined) {
        // A tool that exits before reading its input closes the pipe: that is not our error.
        child.stdin?.on('error', () => undefined);
        child.stdin?.end(commandOptions.input);
      }
    });
  };
}

/** Runs a command and fails unless it exits 0; the error carries the tool's stderr. */
export async function runChecked(
  run: CommandRunner,
  argv: readonly [string, ...string[]],
  options?: CommandOptions,
): Promise<CommandResult> {
  const result = await run(argv, options);
  if (result.exitCode !== 0) {
    const detail = (result.stderr.trim() || result.stdout.trim()).slice(0, 500);
    throw new DriverError(`${argv.join(' ')} exited ${result.exitCode}: ${detail}`);
  }
  return result;
}

/**
 * Starts a long-lived process that outlives the call (an emulator), detached from our stdio;
 * `env` is set over the spawner's environment for this process only.
 */
export type DetachedSpawner = (
  argv: readonly [string, ...string[]],
  options?: { env?: NodeJS.ProcessEnv },
) => Promise<void>;

export function createDetachedSpawner(baseEnv: NodeJS.ProcessEnv = process.env): DetachedSpawner {
  return (argv, options = {}) =>
    new Promise((resolve, reject) => {
      const [file, ...args] = argv;
      const env = options.env === undefined ? baseEnv : { ...baseEnv, ...options.env };
      const child = spawn(file, args, { env, detached: true, stdio: 'ignore' });
      child.once('error', (error) =>
        reject(new DriverError(`${argv.join(' ')}: ${error.message}`, { cause: error })),
      );
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
}
