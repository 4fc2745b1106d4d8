// A command typed into a new shell of the person reading the README: a fresh bash on a terminal
// (a pty, by util-linux `script`), with the machine's own PATH (on this machine Node 20 first) and
// nothing of the test's environment, that sources the env file `npm run up` wrote and runs the
// command as written. What it answers is what that terminal shows (screen.ts) and the exit code.
// Ctrl-C is the byte a keyboard sends, so the terminal signals the foreground job as it would.
import { spawn } from 'node:child_process';
import { Screen } from './screen.js';

export interface ShellSetup {
  /** The folder the shell starts in: `source .simlock/fleet/env` is typed relative to it. */
  cwd: string;
  /** The line that sets up the shell, as the docs have it: `source .simlock/fleet/env`. */
  setup: string;
  /** PATH of a new login on this machine, before the env file. */
  path: string;
  home: string;
}

export interface TypedResult {
  /** The terminal's lines when the command ended. */
  lines: string[];
  exitCode: number;
}

export interface TypedCommand {
  /** What the terminal shows so far. */
  lines(): string[];
  /** Ctrl-C on the keyboard. */
  pressCtrlC(): void;
  ended: Promise<TypedResult>;
  /** Kills whatever still runs (a test that gives up). */
  kill(): void;
}

/** The system's PATH for a new shell, as a fresh login has it (no version manager, no npx). */
export const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

export function typeCommand(shell: ShellSetup, command: string): TypedCommand {
  const screen = new Screen();
  // Job control on (set -m), as in an interactive shell: the command is the terminal's foreground
  // job, so Ctrl-C reaches it, and a job sent to the background (`&`) outlives this shell.
  const script = `set -m\n${shell.setup} || exit 97\n${command}\n`;
  const child = spawn(
    'script',
    ['--quiet', '--flush', '--return', '--command', script, '/dev/null'],
    {
      cwd: shell.cwd,
      env: {
        HOME: shell.home,
        PATH: shell.path,
        SHELL: '/bin/bash',
        TERM: 'xterm',
        LANG: 'C.UTF-8',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    },
  );
  let errors = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => screen.write(text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text));
  const ended = new Promise<TypedResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === null) reject(new Error(`${command}: the terminal ended by ${signal}`));
      else if (code === 97)
        reject(new Error(`${shell.setup} failed: ${screen.lines().join('\n')}`));
      else if (errors.trim()) reject(new Error(`script: ${errors.trim()}`));
      else resolve({ lines: screen.lines(), exitCode: code });
    });
  });
  return {
    lines: () => screen.lines(),
    pressCtrlC: () => child.stdin.write('\x03'),
    ended,
    kill: () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}

/** Types `command` and waits until it ends; kills it and fails after `timeoutMs`. */
export async function runTyped(
  shell: ShellSetup,
  command: string,
  timeoutMs = 60_000,
): Promise<TypedResult> {
  const typed = typeCommand(shell, command);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      typed.kill();
      reject(
        new Error(
          `${command}: still running after ${timeoutMs} ms; the terminal shows:\n${typed.lines().join('\n')}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([typed.ended, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
