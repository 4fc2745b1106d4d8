// The controller as a real process: killed with SIGKILL mid-walk and started again it loses no
// request and dispatches none twice; of two replicas exactly one leads, and the other takes over
// within the lease duration when the leader dies.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../tools/controlplane/start.js';
import { Informer } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { TestFleet, iosStatus } from '../test/cluster/fleet.js';
import { leasesOfRequestsIn, requestNameOf } from '../test/cluster/leases.js';
import { launchArgs } from '../test/launch.js';

const cluster = useCluster('proc');
const children: ChildProcess[] = [];

interface ControllerProcess {
  child: ChildProcess;
  port: number;
  isLeader(): Promise<boolean>;
}

async function startController(
  fleet: TestFleet,
  identity: string,
  extra: string[] = [],
): Promise<ControllerProcess> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...launchArgs('controller'),
      '--kubeconfig',
      cluster.kubeconfigPath,
      '--namespace',
      fleet.namespace,
      '--watch-namespace',
      fleet.namespace,
      '--worker-selector',
      fleet.selector,
      '--listen',
      `127.0.0.1:${port}`,
      '--identity',
      identity,
      '--lease-duration-seconds',
      '3',
      ...extra,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SIMLOCK_LOG_LEVEL: 'warn' } },
  );
  child.stderr?.resume();
  children.push(child);
  return {
    child,
    port,
    async isLeader() {
      try {
        const answer = await fetch(`http://127.0.0.1:${port}/leader`);
        return ((await answer.json()) as { leader: boolean }).leader;
      } catch {
        return false;
      }
    },
  };
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

afterEach(async () => {
  await Promise.all(children.splice(0).map(kill));
});

describe('the controller process', () => {
  it('killed at any moment and restarted: every request granted, none dispatched twice', async () => {
    const fleet = await TestFleet.create(cluster);
    for (const short of ['a', 'b', 'c']) {
      await fleet.addWorker(short, {
        status: iosStatus({
          capacity: {
            global: { limit: 100, running: 0, evictable: 0 },
            platforms: { ios: { limit: 100, running: 0, evictable: 0, atRamBudget: false } },
          },
        }),
      });
    }
    // Watch every Lease ever created: a request dispatched twice shows up as two Lease uids.
    const leaseUids = new Map<string, Set<string>>();
    const leases = new Informer(fleet.admin, leasesOfRequestsIn(fleet.namespace));
    leases.on((event) => {
      const uid = String(event.object.metadata.uid);
      const request = requestNameOf(event.object);
      const uids = leaseUids.get(request) ?? new Set<string>();
      uids.add(uid);
      leaseUids.set(request, uids);
      // Play the agents: grant every new Lease at once.
      if (event.type === 'added' && !event.object.status) {
        void fleet.grant(request, `sim-${request}`).catch(() => undefined);
      }
    });
    leases.start();
    await leases.waitForSync();

    const names = Array.from({ length: 24 }, (_, index) => `r${String(index).padStart(2, '0')}`);
    let controller = await startController(fleet, 'first', ['--leader-election=false']);
    // Create requests in three bursts and SIGKILL the controller during each.
    for (let burst = 0; burst < 3; burst++) {
      const inBurst = names.slice(burst * 8, burst * 8 + 8);
      await Promise.all(inBurst.map((name) => fleet.createRequest(name, { platform: 'ios' })));
      // Killed in the middle of its work: once it has dispatched some of the burst.
      await eventually(() => (inBurst.some((name) => leaseUids.has(name)) ? true : undefined), {
        intervalMs: 10,
        what: `a dispatch of burst ${burst}`,
      });
      await kill(controller.child);
      controller = await startController(fleet, `again-${burst}`, ['--leader-election=false']);
    }
    for (const name of names) {
      expect((await fleet.phase(name, 'Granted', 30_000)).status?.phase).toBe('Granted');
    }
    await leases.stop();
    for (const name of names)
      expect(leaseUids.get(name)?.size, `${name} dispatched more than once`).toBe(1);
    // Its writes carry its name (its User-Agent): who wrote what, as `kubectl get
    // --show-managed-fields` shows it, is simlock-controller, not "unknown".
    const written = { manager: 'simlock-controller', subresource: 'status' };
    expect((await fleet.request('r00')).metadata.managedFields).toContainEqual(
      expect.objectContaining(written),
    );
    expect((await fleet.lease('r00'))?.metadata.managedFields).toContainEqual(
      expect.objectContaining({ manager: 'simlock-controller', operation: 'Update' }),
    );
  }, 120_000);

  it('two replicas: one leads; kill it and the other takes over within the lease duration', async () => {
    const fleet = await TestFleet.create(cluster);
    await fleet.addWorker('a', { status: iosStatus() });
    const first = await startController(fleet, 'replica-1');
    const second = await startController(fleet, 'replica-2');
    const leader = await eventually(
      async () => {
        const states = [await first.isLeader(), await second.isLeader()];
        return states.filter(Boolean).length === 1 ? (states[0] ? first : second) : undefined;
      },
      { timeoutMs: 20_000 },
    );
    const follower = leader === first ? second : first;
    // The leader reconciles: a request is dispatched.
    await fleet.createRequest('before', { platform: 'ios' });
    await fleet.grant('before');
    await fleet.phase('before', 'Granted');
    expect(await follower.isLeader()).toBe(false);

    const killedAt = Date.now();
    await kill(leader.child);
    await eventually(() => follower.isLeader().then((yes) => (yes ? true : undefined)), {
      timeoutMs: 10_000,
    });
    // Lease of 3 s; the follower retries every second, so it leads within duration plus a retry.
    expect(Date.now() - killedAt).toBeLessThan(3000 + 1500);
    await fleet.createRequest('after', { platform: 'ios' });
    await fleet.grant('after');
    await fleet.phase('after', 'Granted');
    await fleet.cleanup();
  }, 60_000);
});
