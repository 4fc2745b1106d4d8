// With a real adb on PATH (Linux: Debian's `adb` package, or the SDK's platform-tools): the same
// listing through the real client and server, with no device attached. It starts an adb server
// of its own on a free port (mDNS and emulator scanning off), times `adb -P <port> devices -l`
// (what our driver runs), appium-adb's getConnectedDevices and adbkit's listDevicesWithPaths
// against it, checks that adbkit's protocol reaches the real server, and stops that server.
import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { z } from 'zod';
import { median } from '../harness/index.js';
import { FakeAdbServer } from './fake-adb-server.js';
import { importLibrary, LIBRARIES, quietAppiumLog } from './libraries.js';
import { withPath } from './listing.js';

const exec = promisify(execFile);

export interface RealAdbFigures {
  adbVersion: string;
  /** Median ms of one listing, each way. */
  adbClient: number;
  appiumAdb: number;
  adbkit: number;
  /** What adbkit's host:version answered (the server's protocol version, 41 for adb 1.0.41). */
  adbkitServerVersion: number;
}

const AdbkitModule = z.object({
  Adb: z.custom<{
    createClient(options: { host: string; port: number }): {
      version(): Promise<number>;
      listDevicesWithPaths(): Promise<unknown>;
    };
  }>(),
});
const AppiumModule = z.object({
  ADB: z.custom<{
    createADB(options: object): Promise<{ getConnectedDevices(o: object): Promise<unknown> }>;
  }>(),
});

async function timed(runs: number, body: () => Promise<unknown>): Promise<number> {
  await body();
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const began = performance.now();
    await body();
    times.push(performance.now() - began);
  }
  return median(times);
}

/** The figures, or undefined when no adb is on PATH. */
export async function measureRealAdb(
  libs: string,
  runs: number,
): Promise<RealAdbFigures | undefined> {
  const found = await exec('which', ['adb']).catch(() => undefined);
  if (found === undefined) return undefined;
  const adbPath = await realpath(found.stdout.trim());
  const probe = await FakeAdbServer.start({ devicesL: '', getprop: {} });
  const port = probe.port;
  await probe.stop();
  const env = { ...process.env, ADB_MDNS: '0', ADB_EMU: '0' };
  const adb = (...args: string[]) => exec(adbPath, ['-P', String(port), ...args], { env });
  const version = (await exec(adbPath, ['version'])).stdout.split('\n')[0] ?? '';
  await adb('start-server');
  try {
    const library = (key: string) => LIBRARIES.find((candidate) => candidate.key === key)!;
    const { Adb } = AdbkitModule.parse(await importLibrary(libs, library('adbkit')));
    const adbkit = Adb.createClient({ host: '127.0.0.1', port });
    const { ADB } = AppiumModule.parse(await importLibrary(libs, library('appium-adb')));
    quietAppiumLog();
    // appium-adb takes adb from <sdk root>/platform-tools: the real adb's folder's parent.
    const appium = await withPath(dirname(adbPath), () =>
      ADB.createADB({ sdkRoot: dirname(dirname(adbPath)), adbPort: port }),
    );
    return {
      adbVersion: version,
      adbClient: await timed(runs, () => adb('devices', '-l')),
      appiumAdb: await timed(runs, () => appium.getConnectedDevices({ verbose: true })),
      adbkit: await timed(runs, () => adbkit.listDevicesWithPaths()),
      adbkitServerVersion: await adbkit.version(),
    };
  } finally {
    await adb('kill-server').catch(() => undefined);
  }
}
