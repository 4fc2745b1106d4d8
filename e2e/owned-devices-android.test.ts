// The emulators simlock makes and owns, end to end through the real adb driver over stateful
// stand-ins of adb, emulator and avdmanager (processes first on PATH, the SDK and the default AVD
// home in the agent's environment). A person on the host has an AVD in the default AVD home,
// running as emulator-5554 on the default adb server they started, and a phone on that server. A
// request for a Pixel model no AVD exists of is granted an emulator the agent made in its own AVD
// home (<dataDir>/avd), the stages on the request in order; then twelve leases come and go, two
// at a time, with an agent restart halfway, and the person's AVD, emulator, server and phone are
// as they were: no call names the AVD or the emulator, the default server is never started,
// restarted or killed, every adb call about the agent's emulators goes to its own server, every
// emulator and avdmanager call runs in its own AVD home. The phone is one the agent serves (adb
// lists phones on the default server): it is read (getprop) but, never leased, never changed.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AndroidStandIns } from '../test/stand-ins/android-stand-ins.js';
import {
  AGENT_SERVER_PORT,
  androidWorld,
  PERSON_AVD,
  PHONE,
} from '../test/stand-ins/android-world.js';
import { startFleetAgent, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { watchLeaseStages } from '../test/cluster/lease-stages.js';
import { useCluster } from '../test/cluster/harness.js';
import * as owned from '../test/cluster/owned-devices.js';

const cluster = useCluster('owned-devices-android');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Even, and twice an even number, so that the restart falls between two pairs.
const LEASES = 12;
const MODEL = 'Pixel Tablet';
const PERSON_EMULATOR = 'emulator-5554';

/** Everything of the person's: their AVD's files and record, their emulator, server and phones. */
async function personsPart(standIns: AndroidStandIns) {
  const state = await standIns.state();
  const home = standIns.defaultAvdHome;
  const files: Record<string, string> = {};
  for (const entry of await readdir(home, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[path.slice(home.length)] = await readFile(path, 'utf8');
  }
  return {
    avds: state.homes[home],
    files,
    emulator: state.emulators['5554'],
    server: state.servers['5037'],
    phones: state.phones,
  };
}

describe('an agent on an Android host with a person on it (adb over stand-ins)', () => {
  it(
    'makes the emulator a request wants in its own AVD home, and leaves the person’s AVD, emulator, server and phone alone through twelve leases and a restart',
    { timeout: 120_000 },
    async () => {
      const world = await androidWorld();
      const { standIns, dataDir } = world;
      cleanups.push(() => standIns.cleanup());
      const ownHome = join(dataDir, 'avd');
      const before = await personsPart(standIns);
      expect(before.emulator).toMatchObject({ avd: PERSON_AVD, serverPort: 5037 });
      expect(before.server).toMatchObject({ running: true, starts: 1, emulators: [5554] });

      const fleet = await TestFleet.create(cluster);
      const { PATH, ANDROID_HOME, ANDROID_AVD_HOME } = standIns.env;
      const agent: AgentProcess = await startFleetAgent(
        cluster,
        fleet,
        {},
        {
          drivers: ['adb'],
          dataDir,
          adb: { serverPort: AGENT_SERVER_PORT },
          reclaim: 'erase-keep-warm',
          limits: { running: 2, platforms: { android: { running: 2 } } },
        },
        { env: { PATH, ANDROID_HOME, ANDROID_AVD_HOME } },
      );
      cleanups.push(() => agent.kill('SIGKILL'));
      await owned.startController(cluster, fleet, cleanups);

      // The Worker offers what the host can make and lists the phone, none of the person's AVDs.
      const status = await owned.statusOffering(agent, MODEL);
      expect(status.devices.map((device) => device.id)).toEqual([PHONE]);

      // The stages the agent writes on each Lease as each begins (test/cluster/lease-stages.ts).
      const stages = await watchLeaseStages(cluster.kubeconfigPath, fleet.namespace);
      cleanups.push(() => stages.stop());

      const want = { platform: 'android', model: MODEL, physical: false };
      await fleet.createRequest('first', want);
      const first = await fleet.phase('first', 'Granted', 60_000);
      const made = first.status?.device?.id ?? '';
      expect(Object.keys((await standIns.state()).homes[ownHome] ?? {})).toEqual([made]);
      expect(stages.of('first')).toEqual(['provisioning', 'booting']);

      // Twelve leases, two at a time (the host's limit), the agent restarted halfway.
      const lease = (name: string) => owned.leaseOnce(fleet, name, want);
      await owned.releaseRequest(fleet, 'first');
      for (let done = 0; done < LEASES; done += 2) {
        if (done === LEASES / 2) await agent.restart('SIGTERM');
        await Promise.all([lease(`l${done}`), lease(`l${done + 1}`)]);
      }

      // The person's AVD, emulator, server and phone: as they were.
      expect(await personsPart(standIns)).toEqual(before);
      const calls = (await standIns.calls()).slice(world.setupCalls);
      const named = (name: string) => calls.filter((call) => call.argv.includes(name));
      expect(named(PERSON_AVD)).toEqual([]);
      expect(named(PERSON_EMULATOR)).toEqual([]);
      expect(calls.filter((call) => call.argv.includes('kill-server'))).toEqual([]);
      // On the default server: the listing and the phone's properties, read once per agent life
      // (and the health check's `adb version`, which asks no server).
      const onDefault = calls.filter((call) => call.tool === 'adb' && call.serverPort === 5037);
      const reads = new Set(onDefault.map((call) => call.argv.join(' ')));
      expect([...reads].sort()).toEqual([
        `-s ${PHONE} shell getprop ro.build.characteristics`,
        `-s ${PHONE} shell getprop ro.build.version.sdk`,
        `-s ${PHONE} shell getprop ro.product.model`,
        'devices -l',
        'version',
      ]);
      expect(named(PHONE)).toHaveLength(2 * 3);
      // Every other adb call goes to the agent's server, about its emulators on its own ports.
      const onOwn = calls.filter((call) => call.tool === 'adb' && call.serverPort !== 5037);
      expect(new Set(onOwn.map((call) => call.serverPort))).toEqual(new Set([AGENT_SERVER_PORT]));
      for (const call of onOwn) {
        const serial = call.argv[call.argv.indexOf('-s') + 1] ?? '';
        if (call.argv.includes('-s')) expect(serial).toMatch(/^emulator-56\d\d$/);
      }
      // Every emulator and avdmanager call ran in the agent's AVD home; its emulators registered
      // with its server.
      const sdkCalls = calls.filter((call) => call.tool !== 'adb');
      expect(sdkCalls.filter((call) => call.avdHome !== ownHome)).toEqual([]);
      for (const boot of sdkCalls.filter((call) => call.argv[0] === '-avd')) {
        expect(boot.env.ANDROID_ADB_SERVER_PORT).toBe(String(AGENT_SERVER_PORT));
      }

      // Only as many AVDs were made as ran at once, all in the agent's home. Every boot started an
      // emulator (none found its port taken), and every one after an AVD's first was wiped: no
      // holder got an emulator another had used, or one a second lease held too.
      const ownAvds = (await standIns.state()).homes[ownHome] ?? {};
      const own = Object.keys(ownAvds);
      expect(own.length).toBeGreaterThanOrEqual(1);
      expect(own.length).toBeLessThanOrEqual(2);
      const bootCalls = sdkCalls.filter((call) => call.argv[0] === '-avd');
      const records = Object.values(ownAvds);
      expect(records.reduce((sum, avd) => sum + avd.boots, 0)).toBe(bootCalls.length);
      expect(records.map((avd) => avd.wipes)).toEqual(records.map((avd) => avd.boots - 1));
      expect(bootCalls.length).toBeGreaterThanOrEqual(LEASES);
      const creates = sdkCalls.filter(
        (call) => call.tool === 'avdmanager' && call.argv[0] === 'create',
      );
      expect(creates).toHaveLength(own.length);
      // The agent's view: its AVDs and the phone, never the person's AVD.
      const last = await agent.status();
      expect(last?.devices.map((device) => device.id).sort()).toEqual([...own, PHONE].sort());
    },
  );
});
