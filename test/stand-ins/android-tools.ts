// Test helper: what the stand-in `adb`, `emulator` and `avdmanager` executables do (see
// android-stand-ins.ts, which writes them): each call is logged, then runs on the state under its
// lock. One file per tool (android-adb.ts, android-emulator.ts, android-avdmanager.ts), what they
// share in android-tool-common.ts. Node runs these files directly (type stripping), so they import
// only node: modules and our files by their `.ts` names, and use erasable TypeScript only. All
// state is one JSON file beside the executables: AVD homes by path, adb servers by port, running
// emulators by console port, USB phones, installed images and device profiles. Outputs and error
// texts follow the real tools (sources in adb/testdata/README.md).
import { appendFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { CallRecord } from './android-state.js';
import { adb } from './android-adb.ts';
import { avdmanager } from './android-avdmanager.ts';
import { emulator } from './android-emulator.ts';
import { avdHomeOf, CALLS_FILE, Exit, option, withState, type Io } from './android-tool-common.ts';

const TOOLS = { adb, emulator, avdmanager } as const;

export interface ToolResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one call of `tool` on the state in `dir`: what an executable does, callable in process too
 * (a test that makes thousands of calls). `readLine` is one read of the tool's stdin.
 */
export function runTool(
  tool: string,
  dir: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  readLine: () => string,
): ToolResult {
  const serverPort = Number(
    (tool === 'adb' ? option(argv, '-P') : undefined) ?? (env.ANDROID_ADB_SERVER_PORT || '5037'),
  );
  const record: CallRecord = {
    tool,
    argv,
    avdHome: avdHomeOf(env),
    serverPort,
    env: {
      ANDROID_AVD_HOME: env.ANDROID_AVD_HOME,
      ANDROID_ADB_SERVER_PORT: env.ANDROID_ADB_SERVER_PORT,
      ADB_EMU: env.ADB_EMU,
      ADB_USB: env.ADB_USB,
      ADB_MDNS: env.ADB_MDNS,
    },
  };
  appendFileSync(join(dir, CALLS_FILE), `${JSON.stringify(record)}\n`);
  const io: Io = { out: '', err: '', readLine };
  let exitCode = 0;
  withState(dir, (state) => {
    // A tool that fails still leaves its changes (a disk-full create uses up its control field).
    try {
      TOOLS[tool as keyof typeof TOOLS](state, argv, env, io);
    } catch (error) {
      if (!(error instanceof Exit)) throw error;
      exitCode = error.code;
    }
  });
  return { exitCode, stdout: io.out, stderr: io.err };
}

/** The executable's entry: `tool` is its name, `dir` where it and the state are. */
export function main(tool: string, dir: string): void {
  const readLine = () => {
    const buffer = Buffer.alloc(256);
    const count = readSync(0, buffer, 0, 256, null);
    return buffer.subarray(0, count).toString();
  };
  const result = runTool(tool, dir, process.argv.slice(2), process.env, readLine);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}
