// The devices simlock makes and owns, end to end through the real simctl driver over a stand-in
// simctl that keeps its device sets on disk: a request for a model no simulator exists of is
// granted one the agent made in its own set, the stages on the request in order; then a hundred
// leases come and go, with an agent restart halfway, and a person's simulators in the default set
// are as they were: never listed, booted, erased or deleted, never named in any simctl call.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTestdata } from '../test/stand-ins/stand-in.js';
import { SimctlStandIn } from '../test/stand-ins/simctl-stand-in.js';
import { startFleetAgent, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { watchLeaseStages } from '../test/cluster/lease-stages.js';
import { useCluster } from '../test/cluster/harness.js';
import * as owned from '../test/cluster/owned-devices.js';

const cluster = useCluster('owned-devices');
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PERSON_BOOTED = '6A4B2C1D-0000-4000-8000-00000000AAAA';
const PERSON_SHUT = '6A4B2C1D-0000-4000-8000-00000000BBBB';
const LEASES = 100;

describe('an agent on a Mac with a person on it (simctl over a stand-in)', () => {
  it(
    'makes the simulator a request wants in its own set, and leaves the default set alone through a hundred leases and a restart',
    { timeout: 300_000 },
    async () => {
      const standIn = await SimctlStandIn.create({
        host: await readTestdata(
          new URL('../agent/drivers/simctl/simctl.test.ts', import.meta.url).href,
          'list-devicetypes-runtimes.json',
        ),
        defaultSet: [
          { udid: PERSON_BOOTED, name: "Ana's iPhone 16", state: 'Booted', boots: 1 },
          { udid: PERSON_SHUT, name: 'iPhone 16 for demos' },
        ],
      });
      cleanups.push(() => standIn.cleanup());
      const dataDir = await mkdtemp(join(tmpdir(), 'simlock-owned-'));
      cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
      const ownSet = join(dataDir, 'simctl-set');
      const before = await standIn.devices();

      const fleet = await TestFleet.create(cluster);
      const agent: AgentProcess = await startFleetAgent(
        cluster,
        fleet,
        {},
        {
          drivers: ['simctl'],
          dataDir,
          reclaim: 'erase-keep-warm',
          limits: { running: 3, platforms: { ios: { running: 3 } } },
        },
        { env: { PATH: standIn.env.PATH } },
      );
      cleanups.push(() => agent.kill('SIGKILL'));
      await owned.startController(cluster, fleet, cleanups);

      // The Worker offers what the host can make, and lists none of the person's simulators.
      const status = await owned.statusOffering(agent, 'iPhone 16');
      expect(status.devices).toEqual([]);

      // The stages the agent writes on each Lease as each begins (test/cluster/lease-stages.ts).
      const stages = await watchLeaseStages(cluster.kubeconfigPath, fleet.namespace);
      cleanups.push(() => stages.stop());

      await fleet.createRequest('first', { platform: 'ios', model: 'iPhone 16' });
      const first = await fleet.phase('first', 'Granted');
      const made = first.status?.device?.id ?? '';
      expect((await standIn.devices(ownSet)).map((device) => device.udid)).toEqual([made]);
      expect(stages.of('first')).toEqual(['provisioning', 'booting']);

      // A hundred leases, three at a time (the host's limit), the agent restarted halfway.
      const lease = (name: string) =>
        owned.leaseOnce(fleet, name, { platform: 'ios', model: 'iPhone 16' });
      await owned.releaseRequest(fleet, 'first');
      // Three lanes take the next lease as each finishes (the host's limit is three).
      const leaseRange = async (from: number, to: number) => {
        let next = from;
        const lane = async () => {
          while (next < to) await lease(`l${next++}`);
        };
        await Promise.all([lane(), lane(), lane()]);
      };
      await leaseRange(0, LEASES / 2);
      await agent.restart('SIGTERM');
      await leaseRange(LEASES / 2, LEASES);

      // The person's simulators: the same state, never erased, never booted again.
      expect(await standIn.devices()).toEqual(before);
      const calls = await standIn.calls();
      const simctlCalls = calls.filter((argv) => argv[0] === 'simctl');
      expect(simctlCalls.filter((argv) => argv[1] !== '--set' || argv[2] !== ownSet)).toEqual([]);
      expect(
        calls.filter((argv) => argv.includes(PERSON_BOOTED) || argv.includes(PERSON_SHUT)),
      ).toEqual([]);
      // Only as many simulators were made as ran at once.
      const own = await standIn.devices(ownSet);
      expect(own.length).toBeGreaterThanOrEqual(1);
      expect(own.length).toBeLessThanOrEqual(3);
      expect(simctlCalls.filter((argv) => argv[3] === 'create').length).toBe(own.length);
      // The agent's view never listed the person's simulators.
      const last = await agent.status();
      expect(last?.devices.map((device) => device.id).sort()).toEqual(
        own.map((device) => device.udid).sort(),
      );
    },
  );
});
