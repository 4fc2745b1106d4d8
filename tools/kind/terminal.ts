// One shell, as a reader's terminal is, for running a page's steps in turn: bash keeps what a
// terminal keeps between them (variables, functions, background jobs such as agents and a
// port-forward). It reads from a named pipe, so any process can run the next step: the kind
// tier's global setup runs the first steps of docs/INSTALL.md, its install test the rest. Each
// step is a file, sourced with its output to a file of its own; a command that fails is named in
// that output by an ERR trap (bash goes on, as a terminal does), and the step's end is a file
// with its exit code. The shell and its background jobs share a process group, ended by close().
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** How the ERR trap names a command that failed: `terminal: exit 1: kubectl get pods`. */
const FAILED = /^terminal: exit (\d+): (.*)$/;

export interface StepResult {
  /** stdout and stderr of the step, as they came. */
  output: string;
  /** The commands that failed (exit code and command line), in order. */
  failures: string[];
  /** The exit code of the step's last command. */
  exitCode: number;
}

/** Quoted for bash: a single-quoted word. */
export const shellWord = (text: string): string => `'${text.replaceAll("'", `'\\''`)}'`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Terminal {
  /** `dir`: the folder of the shell's pipe, its steps and their output. */
  constructor(readonly dir: string) {}

  /**
   * Starts the shell in `cwd` with exactly `env`; answers the terminal and how to end it (the
   * shell and every job it started).
   */
  static async open(
    dir: string,
    options: { cwd: string; env: NodeJS.ProcessEnv },
  ): Promise<{ terminal: Terminal; close: () => Promise<void> }> {
    await mkdir(join(dir, 'steps'), { recursive: true });
    const pipe = join(dir, 'in');
    const made = spawnSync('mkfifo', [pipe], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`mkfifo ${pipe}: ${made.stderr || made.error?.message}`);
    // Read and write: the open does not wait for a writer, and as bash holds a writer itself, it
    // never reads an end of input when the process that wrote a step closes the pipe.
    const input = openSync(pipe, 'r+');
    const log = openSync(join(dir, 'shell.log'), 'a');
    const shell = spawn('bash', ['--noprofile', '--norc'], {
      cwd: options.cwd,
      env: options.env,
      stdio: [input, log, log],
      detached: true,
    });
    closeSync(input);
    closeSync(log);
    const exited = new Promise<void>((resolve) => shell.once('exit', () => resolve()));
    const terminal = new Terminal(dir);
    // -E: the trap holds in functions and command substitutions too.
    await terminal.send(`set -E; trap 'echo "terminal: exit $?: $BASH_COMMAND" >&2' ERR`);
    const close = async () => {
      const group = shell.pid;
      if (group === undefined || shell.exitCode !== null || shell.signalCode !== null) return;
      const signal = (name: NodeJS.Signals) => {
        try {
          process.kill(-group, name);
        } catch {
          // Gone already.
        }
      };
      signal('SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
      // A job that outlives bash (or ignores SIGTERM) goes with the group's SIGKILL.
      signal('SIGKILL');
      await exited;
    };
    return { terminal, close };
  }

  private async send(line: string): Promise<void> {
    await appendFile(join(this.dir, 'in'), `${line}\n`);
  }

  /**
   * Runs `commands` as step `id` (a file name: unique per terminal) and answers its result once
   * it ends; throws after `timeoutMs` with the output so far.
   */
  async run(id: string, commands: string, timeoutMs: number): Promise<StepResult> {
    const base = join(this.dir, 'steps', id);
    const [script, output, status] = [`${base}.sh`, `${base}.out`, `${base}.status`];
    await writeFile(script, `${commands}\n`);
    // The status is written aside and renamed over, so that a reader never sees half of it.
    const [s, o, st] = [script, output, status].map(shellWord);
    await this.send(
      `source ${s} > ${o} 2>&1 < /dev/null; echo $? > ${st}.next; mv ${st}.next ${st}`,
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const code = await readFile(status, 'utf8').catch(() => undefined);
      if (code !== undefined) {
        const text = await readFile(output, 'utf8');
        return { output: text, failures: failures(text), exitCode: Number(code.trim()) };
      }
      if (Date.now() > deadline) {
        const sofar = await readFile(output, 'utf8').catch(() => '');
        throw new Error(
          `step ${id} did not end within ${timeoutMs} ms; its output so far:\n${sofar}`,
        );
      }
      await sleep(250);
    }
  }
}

/** The failed commands an ERR trap named in `output`. */
export function failures(output: string): string[] {
  return output
    .split('\n')
    .map((line) => FAILED.exec(line))
    .filter((match) => match !== null)
    .map((match) => `exit ${match[1]}: ${match[2]}`);
}
