// The stand-in tools answered by a world's server (bash shims, the default) against the same
// programs run as a Node process per call (as before ADR 0022): the same calls through the
// drivers' command runner give the same exit codes, stdout and stderr, and leave the same state
// and call logs, for the rules stand-in, simctl and the Android tools. Random UDIDs, times and the
// worlds' own folders are the only differences allowed.
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCommandRunner, type CommandRunner, type CommandResult } from '../../agent/index.js';
import { androidWorld, IMAGE_34, PERSON_AVD } from './android-world.js';
import { SimctlStandIn } from './simctl-stand-in.js';
import { readTestdata, StandIns } from './stand-in.js';
import type { StandInLaunch } from './stand-in-server.js';

const LAUNCHES: StandInLaunch[] = ['processes', 'server'];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

type CommandOptions = Parameters<CommandRunner>[1];
type Call = [argv: [string, ...string[]], options?: CommandOptions];

/** Runs the calls in order; `next` may add calls from an answer (a UDID simctl printed). */
async function runAll(
  run: (argv: [string, ...string[]], options?: CommandOptions) => Promise<CommandResult>,
  calls: Call[],
): Promise<CommandResult[]> {
  const results: CommandResult[] = [];
  for (const [argv, options] of calls) results.push(await run(argv, options));
  return results;
}

const exitCodes = (seen: unknown) =>
  (seen as { results: CommandResult[] }).results.map((result) => result.exitCode);

/** The worlds' folders (temporary, named by mkdtemp), UDIDs and times made alike. */
function normalized(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value)
      .replace(/(simlock-[a-z-]+-)[A-Za-z0-9]{6}/g, '$1<random>')
      .replace(/[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}/g, '<udid>')
      .replace(/\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(Z| \+0000)/g, '<time>')
      .replace(/"bootCompletedAt":\d+/g, '"bootCompletedAt":0'),
  ) as unknown;
}

describe(
  'stand-in tools answered by the server, against a Node process per call',
  { timeout: 120_000 },
  () => {
    it('the rules stand-in: answers in turn, unexpected argv, a json-output file, the call log', async () => {
      const seen = [];
      for (const launch of LAUNCHES) {
        const standIns = await StandIns.create(
          {
            devicectl: [
              { argv: ['list', '{json-output}'], jsonOutput: '{"a":1}\n', stdout: 'listed\n' },
              {
                argv: ['boot'],
                responses: [{ stderr: 'busy\n', exitCode: 3 }, { stdout: 'ok\n' }],
              },
            ],
          },
          { launch },
        );
        cleanups.push(() => standIns.cleanup());
        const run = createCommandRunner({ env: standIns.env });
        const json = join(standIns.dir, 'out.json');
        const results = await runAll(run, [
          [['devicectl', 'boot']],
          [['devicectl', 'boot']],
          [['devicectl', 'boot']],
          [['devicectl', 'list', json]],
          [['devicectl', 'nope', 'ü "quoted" \\ $x']],
        ]);
        seen.push(
          normalized({
            results,
            json: await readFile(json, 'utf8'),
            calls: await standIns.calls('devicectl'),
          }),
        );
      }
      expect(seen[1]).toEqual(seen[0]);
      expect((seen[0] as { results: CommandResult[] }).results[4]).toMatchObject({ exitCode: 97 });
    });

    it('simctl: sets, create, boot, refusals and its state', async () => {
      const host = await readTestdata(
        new URL('../../agent/drivers/simctl/simctl.test.ts', import.meta.url).href,
        'list-devicetypes-runtimes.json',
      );
      const seen = [];
      for (const launch of LAUNCHES) {
        const standIn = await SimctlStandIn.create({
          host,
          defaultSet: [
            { udid: '6A4B2C1D-0000-4000-8000-00000000AAAA', name: 'Ana', state: 'Booted' },
          ],
          launch,
        });
        const set = await mkdtemp(join(tmpdir(), 'simlock-set-'));
        cleanups.push(
          () => standIn.cleanup(),
          () => rm(set, { recursive: true, force: true }),
        );
        const run = createCommandRunner({ env: standIn.env });
        const simctl = (...args: string[]): Call => [['xcrun', 'simctl', '--set', set, ...args]];
        const results = await runAll(run, [
          [['xcrun', 'simctl', 'list', '-j']],
          simctl('list', '-j', 'devices', 'runtimes', 'devicetypes'),
          simctl('create', 'a', 'com.apple.CoreSimulator.SimDeviceType.iPhone-16', 'nope'),
          simctl(
            'create',
            'a',
            'com.apple.CoreSimulator.SimDeviceType.iPhone-16',
            'com.apple.CoreSimulator.SimRuntime.iOS-18-4',
          ),
        ]);
        const udid = results[3]!.stdout.trim();
        results.push(
          ...(await runAll(run, [
            simctl('bootstatus', udid, '-b'),
            simctl('boot', udid),
            simctl('erase', udid),
            simctl('shutdown', udid),
            simctl('shutdown', udid),
            simctl('list', '-j', 'devices'),
            simctl('launch', udid, 'com.example.app'),
            simctl('delete', udid),
            simctl('boot', udid),
            simctl('list'),
            [['xcrun', 'notatool']],
          ])),
        );
        await standIn.failNextCreate('disk-full');
        results.push(
          ...(await runAll(run, [
            simctl('create', 'b', 'iPhone 16', 'iOS 18.4'),
            simctl('create', 'b', 'iPhone 16', 'iOS 18.4'),
          ])),
        );
        const state = {
          sets: await standIn.sets(),
          own: await standIn.devices(set),
          default: await standIn.devices(),
        };
        seen.push(normalized({ results, state, calls: await standIn.calls() }));
      }
      expect(seen[1]).toEqual(seen[0]);
      expect(exitCodes(seen[0])).toEqual([
        0, 0, 161, 0, 0, 149, 149, 0, 149, 0, 0, 0, 148, 97, 72, 28, 0,
      ]);
    });

    it('adb, emulator and avdmanager: environments, stdin, servers, emulators and the call log', async () => {
      const seen = [];
      for (const launch of LAUNCHES) {
        const world = await androidWorld({ launch });
        cleanups.push(() => world.standIns.cleanup());
        const home = join(world.dataDir, 'avd');
        await mkdir(home, { recursive: true });
        const ours = { ANDROID_AVD_HOME: home, ANDROID_ADB_SERVER_PORT: '5137', ADB_EMU: '0' };
        const run = createCommandRunner({ env: world.standIns.env });
        const results = await runAll(run, [
          [['adb', 'devices', '-l']],
          [['adb', 'start-server'], { env: ours }],
          [['avdmanager', 'list', 'device', '-c']],
          [
            ['avdmanager', 'create', 'avd', '-n', 'made', '-k', IMAGE_34, '-d', 'pixel_7'],
            { env: ours },
          ],
          [
            ['avdmanager', 'create', 'avd', '-n', 'asked', '-k', IMAGE_34],
            { env: ours, input: 'no\n' },
          ],
          [
            ['avdmanager', 'create', 'avd', '-n', 'made', '-k', IMAGE_34, '-d', 'pixel_7'],
            { env: ours },
          ],
          [['emulator', '-list-avds'], { env: ours }],
          [['emulator', '-avd', 'made', '-port', '5556', '-wipe-data'], { env: ours }],
          [['emulator', '-avd', PERSON_AVD, '-port', '5558']],
          [['adb', 'devices'], { env: ours }],
          [
            ['adb', '-s', 'emulator-5556', 'shell', 'getprop', 'ro.build.version.sdk'],
            { env: ours },
          ],
          [['adb', '-P', '5137', '-s', 'emulator-5556', 'emu', 'avd', 'name']],
          [['adb', '-s', 'emulator-5556', 'emu', 'kill'], { env: ours }],
          [['avdmanager', 'delete', 'avd', '-n', 'made'], { env: ours }],
          [['adb', '-s', 'R58N12ABCDE', 'shell', 'pm', 'list', 'packages', '-3']],
          [['adb', 'kill-server'], { env: ours }],
          [['adb', 'frobnicate']],
        ]);
        const state = await world.standIns.state();
        const calls = await world.standIns.calls();
        seen.push(normalized({ results, state, calls }));
      }
      expect(seen[1]).toEqual(seen[0]);
      expect(exitCodes(seen[0])).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1]);
    });
  },
);

describe('the stand-in server', () => {
  it('fails a tool that reads a stdin left open, instead of hanging, and a call once it is gone', async () => {
    const world = await androidWorld();
    cleanups.push(() => world.standIns.cleanup());
    const run = createCommandRunner({ env: world.standIns.env });
    const env = { ANDROID_AVD_HOME: join(world.dataDir, 'avd') };
    await mkdir(env.ANDROID_AVD_HOME, { recursive: true });
    const asked = await run(['avdmanager', 'create', 'avd', '-n', 'asked', '-k', IMAGE_34], {
      env,
    });
    expect(asked).toMatchObject({ exitCode: 1 });
    expect(asked.stderr).toContain('stand-in read stdin, which was left open');
    // A shim kept past its world's end (an agent's late call).
    const kept = await mkdtemp(join(tmpdir(), 'simlock-kept-'));
    cleanups.push(() => rm(kept, { recursive: true, force: true }));
    await copyFile(join(world.standIns.dir, 'adb'), join(kept, 'adb'));
    await world.standIns.cleanup();
    const gone = await createCommandRunner()([join(kept, 'adb'), 'devices']);
    expect(gone).toMatchObject({ exitCode: 97, stdout: '' });
    expect(gone.stderr).toMatch(/^stand-in adb: its server \(127\.0\.0\.1:\d+\) is gone\n$/);
  });
});
