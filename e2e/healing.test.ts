// A fleet that heals itself (issue 34), end to end through the real simctl driver over the
// stateful simctl stand-in (and adb over its stand-ins for an emulator's crash): a real agent
// process with the stand-in first on its PATH, the controller in-process and the real exec proxy,
// against a real API server. A leased simulator killed is booted again under the same lease (the
// request shows its recovery, then DeviceRecovered with an Event; an exec meanwhile is refused
// UNAVAILABLE saying so, one after succeeds); killed a third time within the window its lease is
// lost and it is quarantined, and a retry puts it back once the stand-in lets it boot; idle, it
// shuts down and is deleted on the short idle times configured. A host low on disk makes nothing
// and the request says why. A killed emulator is booted again under its lease the same way.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEVICE_RECOVERING,
  SimlockError,
  type Device,
  type LeaseRequestStatus,
  reasonsByWorker,
} from '../api/index.js';
import { execThroughProxy } from '../runtime/index.js';
import { readTestdata } from '../test/stand-ins/stand-in.js';
import { SimctlStandIn, type StandInSimulator } from '../test/stand-ins/simctl-stand-in.js';
import { AGENT_SERVER_PORT, androidWorld } from '../test/stand-ins/android-world.js';
import { startFleetAgent } from '../test/cluster/agents.js';
import { controllerFor, takingRequests } from '../test/cluster/controller.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import { TestFleet, type RequestView } from '../test/cluster/fleet.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('healing');
const plugin = join(fileURLToPath(new URL('../bin/', import.meta.url)), 'kubectl-simlock');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A simctl stand-in with no simulator yet (the agent makes them in its own set), and its data dir. */
async function simctlHost(): Promise<{ standIn: SimctlStandIn; dataDir: string; ownSet: string }> {
  const standIn = await SimctlStandIn.create({
    host: await readTestdata(
      new URL('../agent/drivers/simctl/simctl.test.ts', import.meta.url).href,
      'list-devicetypes-runtimes.json',
    ),
  });
  cleanups.push(() => standIn.cleanup());
  const dataDir = await mkdtemp(join(tmpdir(), 'simlock-healing-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  return { standIn, dataDir, ownSet: join(dataDir, 'simctl-set') };
}

/** The request's status as the contract has it (the fleet's view of it is narrower). */
const shown = (request: RequestView) =>
  (request.status ?? { phase: 'Pending' }) as LeaseRequestStatus;
const recoveringOf = (request: RequestView) =>
  shown(request).conditions?.find((condition) => condition.type === DEVICE_RECOVERING);

async function eventWith(fleet: TestFleet, name: string, reason: string): Promise<string> {
  return eventually(
    async () => (await fleet.events(name)).find((event) => event.startsWith(`${reason}: `)),
    { what: `${reason} Event on ${name}` },
  );
}

describe('a fleet that heals itself (simctl and adb over stand-ins)', () => {
  it(
    'boots a killed simulator again under its lease, quarantines one killed three times, brings it back, and idles it away',
    { timeout: 90_000 },
    async () => {
      const { standIn, dataDir, ownSet } = await simctlHost();
      const env: ExecFleet = await startExecFleet(cluster, {
        agentConfig: {
          drivers: ['simctl'],
          dataDir,
          limits: { running: 1, platforms: { ios: { running: 1 } } },
          bootTimeoutMs: 2000,
          quarantine: { retryBackoffSeconds: [1, 1] },
          idle: { shutdownAfterSeconds: 1, deleteAfterSeconds: 1 },
          disk: { lowBelowGiB: 0 },
        },
        agentEnv: { PATH: standIn.env.PATH },
      });
      cleanups.push(() => env.stop());
      const { fleet, agent } = env;
      const exec = (args: string[]) =>
        execThroughProxy({
          url: env.proxyUrl,
          token: env.token,
          namespace: fleet.namespace,
          lease: 'held',
          tool: 'simctl',
          args,
          onOutput: () => undefined,
        });
      const simulator = async (): Promise<StandInSimulator | undefined> =>
        (await standIn.devices(ownSet))[0];
      const deviceOf = async (id: string): Promise<Device | undefined> =>
        (await agent.status())?.devices.find((device) => device.id === id);

      await fleet.createRequest('held', { platform: 'ios', model: 'iPhone 16' });
      const granted = await fleet.phase('held', 'Granted', 30_000);
      const udid = granted.status?.device?.id ?? '';
      expect((await simulator())?.udid).toBe(udid);
      expect(await exec(['getenv', 'HOME'])).toEqual({ exitCode: 0 });

      // Killed while its boots hang: the lease stays Granted, the request shows the recovery
      // and an Event, and an exec meanwhile is refused at once saying so.
      await standIn.setNeverBoots(ownSet, udid, true);
      await standIn.kill(ownSet, udid);
      const recovering = await fleet.requestWhere('held', (r) => shown(r).recovery !== undefined);
      expect(shown(recovering)).toMatchObject({
        phase: 'Granted',
        recovery: { cause: 'shut down', crashes: 1, crashBudget: 3 },
      });
      expect(await eventWith(fleet, 'held', 'DeviceRecovering')).toMatch(/crashed \(shut down\)/);
      const refused = await exec(['getenv', 'HOME']).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(SimlockError);
      expect(refused).toMatchObject({ code: 'UNAVAILABLE' });
      expect((refused as SimlockError).message).toMatch(
        /^device .+ is restarting after a crash; (back in about \d+ s|it is taking longer than the usual \d+ s|back when it has booted)$/,
      );

      // The stand-in lets it boot: the same simulator is booted again, the lease goes on.
      await standIn.setNeverBoots(ownSet, udid, false);
      const back = await fleet.requestWhere(
        'held',
        (r) => shown(r).recovery === undefined && recoveringOf(r)?.reason === 'DeviceRecovered',
      );
      expect(shown(back)).toMatchObject({ phase: 'Granted', device: { id: udid } });
      expect(await eventWith(fleet, 'held', 'DeviceRecovered')).toMatch(/is back after its crash/);
      expect(await simulator()).toMatchObject({ udid, state: 'Booted', boots: 2 });
      expect(await exec(['getenv', 'HOME'])).toEqual({ exitCode: 0 });

      // A second crash is booted again too.
      await standIn.kill(ownSet, udid);
      await eventually(async () => ((await simulator())?.boots === 3 ? true : undefined), {
        what: 'the simulator booted a third time',
      });
      await fleet.requestWhere('held', (r) => shown(r).recovery === undefined);

      // The third within the window ends the lease and quarantines the simulator; its first
      // retry fails (the stand-in will not boot it), the next puts it back once it may boot.
      await standIn.setNeverBoots(ownSet, udid, true);
      await standIn.kill(ownSet, udid);
      const lost = await fleet.phase('held', 'Released');
      expect(lost.status?.conditions).toContainEqual(
        expect.objectContaining({ type: 'Granted', status: 'False', reason: 'Lost' }),
      );
      expect(recoveringOf(lost)).toMatchObject({ status: 'False', reason: 'Lost' });
      expect(recoveringOf(lost)?.message).toMatch(
        /crashed 3 times in 10 minutes; it is quarantined and the lease is lost$/,
      );
      const quarantined = await eventually(
        async () => {
          const device = await deviceOf(udid);
          return device?.quarantine?.retries === 1 ? device : undefined;
        },
        { timeoutMs: 15_000, what: 'the simulator quarantined, its first retry failed' },
      );
      expect(quarantined.state).toBe('quarantined');
      expect(quarantined.quarantine?.reason).toMatch(
        /^crashed 3 times in 10 minutes; retry 1 failed: /,
      );
      await standIn.setNeverBoots(ownSet, udid, false);
      await eventually(async () => ((await deviceOf(udid))?.state === 'ready' ? true : undefined), {
        timeoutMs: 15_000,
        what: 'the simulator back in service',
      });

      // Nobody leases it: it shuts down, then it is deleted, on the short idle times.
      await eventually(async () => ((await simulator())?.state === 'Shutdown' ? true : undefined), {
        what: 'the idle simulator shut down',
      });
      await eventually(async () => ((await simulator()) === undefined ? true : undefined), {
        what: 'the idle simulator deleted',
      });
      await eventually(async () => ((await deviceOf(udid)) === undefined ? true : undefined), {
        what: 'the deleted simulator gone from the Worker',
      });
    },
  );

  it(
    'makes nothing while the disk is low, and the request says why',
    { timeout: 60_000 },
    async () => {
      const { standIn, dataDir } = await simctlHost();
      const fleet = await TestFleet.create(cluster);
      cleanups.push(() => fleet.cleanup());
      // Low below more than any disk here has: the agent finds the disk low.
      const agent = await startFleetAgent(
        cluster,
        fleet,
        {},
        { drivers: ['simctl'], dataDir, disk: { lowBelowGiB: 100_000 } },
        { env: { PATH: standIn.env.PATH } },
      );
      cleanups.push(() => agent.kill('SIGKILL'));
      const reconciler = controllerFor(cluster, fleet);
      cleanups.push(() => reconciler.stop());
      await reconciler.start();
      await takingRequests(reconciler, fleet.name('a'));
      expect((await agent.status())?.disk).toMatchObject({ lowBelowGiB: 100_000, low: true });

      await fleet.createRequest('wants', { platform: 'ios', model: 'iPhone 16' });
      const waiting = await fleet.requestWhere('wants', (r) =>
        reasonsByWorker(r.status).some((entry) => entry.capacityReason === 'disk-low'),
      );
      expect(waiting.status?.phase).toBe('Waiting');
      expect(reasonsByWorker(waiting.status)).toEqual([
        expect.objectContaining({ worker: agent.name, reason: 'full', capacityReason: 'disk-low' }),
      ]);
      // What its holder reads: `kubectl simlock list --requests` gives the worker's reason.
      const listed = await runCommand(plugin, [
        ...['list', '--requests', '--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace],
      ]);
      expect(listed.stdout).toMatch(/^ {2}wrk_a: full: disk space low$/m);
      expect(await standIn.devices(join(dataDir, 'simctl-set'))).toEqual([]);
      expect((await standIn.calls()).filter((argv) => argv.includes('create'))).toEqual([]);
    },
  );

  it(
    'boots a killed emulator again under its lease (adb over stand-ins)',
    { timeout: 90_000 },
    async () => {
      const { standIns, dataDir } = await androidWorld();
      cleanups.push(() => standIns.cleanup());
      const fleet = await TestFleet.create(cluster);
      cleanups.push(() => fleet.cleanup());
      const { PATH, ANDROID_HOME, ANDROID_AVD_HOME } = standIns.env;
      const agent = await startFleetAgent(
        cluster,
        fleet,
        {},
        {
          drivers: ['adb'],
          dataDir,
          adb: { serverPort: AGENT_SERVER_PORT },
          limits: { running: 1, platforms: { android: { running: 1 } } },
          disk: { lowBelowGiB: 0 },
        },
        { env: { PATH, ANDROID_HOME, ANDROID_AVD_HOME } },
      );
      cleanups.push(() => agent.kill('SIGKILL'));
      const reconciler = controllerFor(cluster, fleet);
      cleanups.push(() => reconciler.stop());
      await reconciler.start();
      await takingRequests(reconciler, fleet.name('a'));

      await fleet.createRequest('emu', {
        platform: 'android',
        model: 'Pixel Tablet',
        physical: false,
      });
      const granted = await fleet.phase('emu', 'Granted', 60_000);
      const avd = granted.status?.device?.id ?? '';
      standIns.killEmulator(avd);
      const back = await fleet.requestWhere(
        'emu',
        (r) => shown(r).recovery === undefined && recoveringOf(r)?.reason === 'DeviceRecovered',
        30_000,
      );
      expect(shown(back)).toMatchObject({ phase: 'Granted', device: { id: avd } });
      expect(await eventWith(fleet, 'emu', 'DeviceRecovering')).toMatch(
        /crashed \(emulator process exited\)/,
      );
      expect(await eventWith(fleet, 'emu', 'DeviceRecovered')).toMatch(/is back after its crash/);
      // The same AVD runs again in an emulator.
      const running = Object.values((await standIns.state()).emulators);
      expect(running.filter((emulator) => emulator.avd === avd)).toHaveLength(1);
    },
  );
});
