// Replays the docs' sessions (doc-sessions.ts) in a second shell (terminal.ts), command by command
// in the docs' order, each typed into a new shell that sources the env file, and compares what the
// terminal shows with the docs. With SIMLOCK_DOCS_WRITE=1 it writes what the terminal showed into
// the docs instead, where the two differ: that is how the docs' outputs are made.
import { readFile, writeFile } from 'node:fs/promises';
import { describeMismatch, matches, type DocCommand } from './doc-sessions.js';
import { runTyped, typeCommand, type ShellSetup, type TypedResult } from './terminal.js';

export const WRITE_DOCS = process.env.SIMLOCK_DOCS_WRITE === '1';

/** Commands that only read: typed again until they show the docs' lines (the fleet settles). */
const READS =
  /^(kubectl (get|describe)\b|kubectl simlock (list|why|worker list|device list)\b|cat\b)/;

export interface Replayed {
  command: DocCommand;
  actual: string[];
  exitCode: number;
  ok: boolean;
}

export interface ReplayOptions {
  shell: ShellSetup;
  /** What a command the test cannot type showed (`npm run up`: the fleet under test). */
  given?: Record<string, string[]>;
  /** How long a read may take to show the docs' lines. */
  settleMs?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(
  deadlineMs: number,
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await attempt();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(200);
  }
}

/** A command whose docs show `^C`: typed, Ctrl-C pressed once the lines above it show. */
async function interrupted(
  shell: ShellSetup,
  command: DocCommand,
  settleMs: number,
): Promise<TypedResult> {
  const before = command.expected.slice(
    0,
    command.expected.findIndex((line) => line.startsWith('^C')),
  );
  const typed = typeCommand(shell, command.command);
  try {
    await until(
      settleMs,
      () => Promise.resolve(typed.lines()),
      (lines) => matches(before, lines),
    );
    typed.pressCtrlC();
    return await Promise.race([
      typed.ended,
      sleep(30_000).then(() => ({ lines: typed.lines(), exitCode: -1 })),
    ]);
  } finally {
    typed.kill();
  }
}

/** Types each command; stops at the first that shows other lines than the docs (unless writing). */
export async function replay(commands: DocCommand[], options: ReplayOptions): Promise<Replayed[]> {
  const settleMs = options.settleMs ?? (WRITE_DOCS ? 5_000 : 30_000);
  const replayed: Replayed[] = [];
  let lastExitCode = 0;
  for (const command of commands) {
    let result: TypedResult;
    const given = options.given?.[command.command];
    if (given) result = { lines: given, exitCode: 0 };
    else if (command.command === 'echo $?')
      // A new shell per command: the exit code shown is the one the command before ended with.
      result = { lines: [String(lastExitCode)], exitCode: 0 };
    else if (command.expected.some((line) => line.startsWith('^C')))
      result = await interrupted(options.shell, command, settleMs);
    else if (READS.test(command.command))
      result = await until(
        settleMs,
        () => runTyped(options.shell, command.command),
        (typed) => matches(command.expected, typed.lines),
      );
    else result = await runTyped(options.shell, command.command);
    lastExitCode = result.exitCode;
    const ok = matches(command.expected, result.lines);
    replayed.push({ command, actual: result.lines, exitCode: result.exitCode, ok });
    if (!ok && !WRITE_DOCS) break;
  }
  return replayed;
}

/** The first command that showed other lines than the docs, as a message; undefined if none. */
export function firstMismatch(file: string, replayed: Replayed[]): string | undefined {
  const wrong = replayed.find((entry) => !entry.ok);
  return (
    wrong &&
    describeMismatch(
      `${file}:${wrong.command.line}`,
      wrong.command.command,
      wrong.command.expected,
      wrong.actual,
    )
  );
}

/** Writes what the terminal showed under each `$ command` whose lines differ from the docs. */
export async function writeActual(path: string, replayed: Replayed[]): Promise<void> {
  const lines = (await readFile(path, 'utf8')).split('\n');
  const wrong = replayed
    .filter((entry) => !entry.ok)
    .sort((a, b) => b.command.line - a.command.line);
  for (const { command, actual } of wrong) {
    // command.line is 1-based: its output starts at that index.
    lines.splice(command.line, command.expected.length, ...actual);
  }
  await writeFile(path, lines.join('\n'));
}
