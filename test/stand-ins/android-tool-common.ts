// Test helper: what the stand-in `adb`, `emulator` and `avdmanager` (android-tools.ts) share: the
// state file, read and written under a lock by every call; argv options; failing with a tool's
// error text; the AVD home of an environment; the parts of a system image path. Apart so each
// tool's file holds that tool alone. Node runs these files directly (type stripping): node:
// modules and erasable TypeScript only, and imports of our files name them with `.ts`.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AndroidState } from './android-state.js';

export class Exit extends Error {
  code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

export interface Io {
  out: string;
  err: string;
  /** One read of stdin, as avdmanager's prompt does (blocks while the pipe is open). */
  readLine: () => string;
}

/** One call of a tool on the state: its argv and environment in, its output into `io`. */
export type StandInTool = (
  state: AndroidState,
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: Io,
) => void;

export const STATE_FILE = 'android-state.json';
export const CALLS_FILE = 'android-calls.jsonl';

export function avdHomeOf(env: NodeJS.ProcessEnv): string {
  if (env.ANDROID_AVD_HOME) return env.ANDROID_AVD_HOME;
  if (env.ANDROID_USER_HOME) return join(env.ANDROID_USER_HOME, 'avd');
  return join(env.HOME ?? '/nonexistent', '.android', 'avd');
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `change` on the state under a lock (mkdir is atomic), writing it back after. */
export function withState<T>(dir: string, change: (state: AndroidState) => T): T {
  const lock = join(dir, 'android-state.lock');
  for (let tries = 0; ; tries++) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (tries > 2000) throw new Error('stand-in state lock held too long');
      sleepSync(5);
    }
  }
  try {
    const file = join(dir, STATE_FILE);
    const state = JSON.parse(readFileSync(file, 'utf8')) as AndroidState;
    const result = change(state);
    // Written whole and renamed into place: a reader outside the lock (a test asking for the
    // state while a tool runs) sees the old state or the new one, never half a file.
    writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 1));
    renameSync(`${file}.tmp`, file);
    return result;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `system-images;android-34;google_apis;x86_64` → its parts. */
export function imageParts(image: string) {
  const [, platform = '', tag = '', abi = ''] = image.split(';');
  return { platform, tag, abi, api: /android-(\d+)/.exec(platform)?.[1] ?? '0' };
}

export function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
}

export function fail(io: Io, text: string, code = 1): never {
  io.err += text;
  throw new Exit(code);
}
