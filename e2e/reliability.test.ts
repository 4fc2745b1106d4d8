// Reliability under a steady load of lease and release, while things fail: the leader of two
// controller replicas is killed (SIGKILL) at random moments, an agent is killed and started again,
// kube-apiserver is restarted once and etcd once, and another agent is cut off from the API server
// for 8 s (its packets dropped: test/cluster/partition.ts). The control plane is this file's own,
// so restarting it disturbs no other test file. Afterwards:
//   - every request ended Granted (and was released), Failed with a code, or Released;
//   - no request was granted under two Leases (Lease uids per name, from a watch);
//   - no device was in two live Granted Leases at any moment (a LIST every 100 ms: a consistent
//     snapshot, which a relisting watch is not; live: not being deleted, as the agent reclaims a
//     deleted Lease's device before it lets the Lease go);
//   - while the agent was cut off, the others went on granting;
//   - after it came back, it reclaimed what was released while it was away, and serves again;
//   - the reasons of requests that wait on a full fleet converge to the truth.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Informer,
  KubeClient,
  isNotFound,
  simlockPath,
  type KubeObject,
} from '../runtime/index.js';
import { iosSimulatorScript, startAgent, type AgentProcess } from '../test/cluster/agents.js';
import { FLEET_LABEL } from '../test/cluster/fleet.js';
import { leasesOfRequestsIn, requestNameOf } from '../test/cluster/leases.js';
import { eventually } from '../test/cluster/harness.js';
import {
  NetworkPartition,
  pairAddresses,
  partitionsUnavailable,
} from '../test/cluster/partition.js';
import { Replicas } from '../test/cluster/replicas.js';
import { startControlPlane, type ControlPlane } from '../tools/controlplane/start.js';
import { aLeaseRequest } from '../test/fixtures/objects.js';
import { reasonsByWorker, type WorkerReasonItem } from '../api/index.js';

const crds = fileURLToPath(new URL('../crds/', import.meta.url));
const NAMESPACE = 'reliability';
const SYSTEM_NAMESPACE = 'reliability-system';
const FLEET = 'reliability';
/** How long the load goes on at least; it also lasts until the partition has healed. */
const CHAOS_MS = 44_000;
/** How long the third agent is cut off from the API server (its heartbeat lasts 5 s). */
const PARTITION_MS = 8_000;
/** Why this machine cannot cut an agent off, if it cannot: said in the test list, never silently. */
const noPartition = await partitionsUnavailable();
if (noPartition) console.warn(`reliability: the partition step does NOT run: ${noPartition}`);
let partition: NetworkPartition | undefined;
/** Requests created and not yet granted, at most, while the load runs. */
const OUTSTANDING = 5;

let controlPlane: ControlPlane | undefined;
let admin: KubeClient;
const agents: AgentProcess[] = [];

// Two controller replicas, restarted when they exit (as a Deployment would).
const replicas = new Replicas({
  kubeconfigPath: () => controlPlane?.kubeconfigPath ?? '',
  systemNamespace: SYSTEM_NAMESPACE,
  watchNamespace: NAMESPACE,
  workerSelector: `${FLEET_LABEL}=${FLEET}`,
  extraArgs: [
    '--lease-duration-seconds',
    '3',
    '--dispatch-timeout-ms',
    '3000',
    '--reason-write-interval-ms',
    '200',
  ],
});

beforeAll(async () => {
  controlPlane = await startControlPlane({
    servingAddresses: noPartition ? [] : [pairAddresses(0).host],
  });
  if (!noPartition) {
    partition = await NetworkPartition.create(0, {
      port: Number(new URL(controlPlane.server).port),
    });
  }
  const run = promisify(execFile);
  const kubectl = `${controlPlane.binDir}/kubectl`;
  const kubeconfig = ['--kubeconfig', controlPlane.kubeconfigPath];
  await run(kubectl, [...kubeconfig, 'apply', '--server-side', '-f', crds]);
  await run(kubectl, [...kubeconfig, 'wait', '--for=condition=Established', 'crd', '--all']);
  admin = KubeClient.fromOptions({ kubeconfig: controlPlane.kubeconfigPath });
  for (const name of [NAMESPACE, SYSTEM_NAMESPACE]) {
    await admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
  }
}, 120_000);

afterAll(async () => {
  replicas.stop();
  await Promise.all(agents.map((agent) => agent.kill('SIGKILL')));
  await partition?.remove();
  await controlPlane?.stop();
}, 60_000);

type Outcome = 'granted' | 'released' | `failed:${string}`;

/** An agent's process state and its last words, for the message of a failed check. */
async function describeAgent(agent: AgentProcess): Promise<string> {
  const { exitCode, signalCode } = agent.child;
  const state =
    exitCode === null && signalCode === null ? 'running' : `exited ${signalCode ?? exitCode}`;
  const view = await agent.status();
  const devices = (view?.devices ?? []).map((device) => `${device.id} ${device.state}`).join(', ');
  const capacity = JSON.stringify(view?.capacity?.platforms.ios ?? {});
  return `${agent.name} (${state}; ${devices}; ios ${capacity}): ${agent.output().slice(-1500)}`;
}

describe('reliability', () => {
  // Skipped only where this machine cannot make network namespaces (partitionsUnavailable says
  // why, and the reason is in the skipped test's title and on stderr): the rest of the story runs.
  if (noPartition) it.skip(`cuts an agent off from the API server: NOT RUN here (${noPartition})`);

  it('under lease and release, with leaders killed, an agent killed, one cut off, the API server and etcd restarted: nothing lost, nothing granted twice', async () => {
    const kubeconfigPath = controlPlane?.kubeconfigPath ?? '';
    const cutOff = partition;
    agents.push(
      ...(await Promise.all(
        ['a', 'b', 'c'].map(async (short) =>
          startAgent({
            admin,
            kubeconfigPath:
              short === 'c' && cutOff
                ? await cutOff.kubeconfigThrough(kubeconfigPath)
                : kubeconfigPath,
            name: `rel-${short}`,
            namespace: SYSTEM_NAMESPACE,
            fleet: FLEET,
            script: iosSimulatorScript({ bootMs: 20 }),
            ...(short === 'c' && cutOff ? { commandPrefix: cutOff.commandPrefix } : {}),
          }),
        ),
      )),
    );
    await replicas.start(2);

    // --- what is watched --------------------------------------------------------------------
    const grantedUids = new Map<string, Set<string>>();
    const dispatches = new Map<string, Set<string>>();
    const leases = new Informer(admin, leasesOfRequestsIn(NAMESPACE));
    leases.on((event) => {
      const { uid } = event.object.metadata;
      const name = requestNameOf(event.object);
      const all = dispatches.get(name) ?? new Set<string>();
      all.add(String(uid));
      dispatches.set(name, all);
      if ((event.object.status as { phase?: string } | undefined)?.phase === 'Granted') {
        const granted = grantedUids.get(name) ?? new Set<string>();
        granted.add(String(uid));
        grantedUids.set(name, granted);
      }
    });
    const outcomes = new Map<string, Set<Outcome>>();
    const grantedAt = new Map<string, number>();
    /** Which worker each request was granted on. */
    const grantedOn = new Map<string, string>();
    const requests = new Informer(admin, {
      path: simlockPath('leaseRequest', { namespace: NAMESPACE }),
    });
    requests.on((event) => {
      if (event.type === 'deleted') return;
      const status = event.object.status as
        { phase?: string; worker?: string; error?: { code?: string } } | undefined;
      const name = event.object.metadata.name;
      const seen = outcomes.get(name) ?? new Set<Outcome>();
      if (status?.phase === 'Granted') {
        seen.add('granted');
        if (!grantedAt.has(name)) grantedAt.set(name, Date.now());
        if (status.worker) grantedOn.set(name, status.worker);
      }
      if (status?.phase === 'Released') seen.add('released');
      if (status?.phase === 'Failed') seen.add(`failed:${status.error?.code ?? ''}`);
      outcomes.set(name, seen);
    });
    leases.start();
    requests.start();
    await Promise.all([leases.waitForSync(), requests.waitForSync()]);

    // No device in two live Granted Leases, in any snapshot.
    const violations: string[] = [];
    let snapshots = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        try {
          const { path, labelSelector } = leasesOfRequestsIn(NAMESPACE);
          const list = (await admin.get(path, { query: { labelSelector } })) as {
            items: KubeObject[];
          };
          const holders = new Map<string, string>();
          for (const lease of list.items) {
            const status = lease.status as
              { phase?: string; device?: { id?: string }; grantedAt?: string } | undefined;
            const worker = (lease.spec as { worker?: string } | undefined)?.worker;
            // A Lease being deleted is on its way out: its agent reclaims the device first and
            // lets the Lease go after, so the device may serve another lease meanwhile.
            if (status?.phase !== 'Granted' || !status.device?.id) continue;
            if (lease.metadata.deletionTimestamp) continue;
            const device = `${worker}/${status.device.id}`;
            const holder = `${requestNameOf(lease)} (granted ${status.grantedAt ?? '?'})`;
            const other = holders.get(device);
            if (other) violations.push(`${device} in ${other} and ${holder}`);
            holders.set(device, holder);
          }
          snapshots++;
        } catch {
          // the API server is restarting
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // Releases what was granted after a short hold, and lets go of what ended otherwise; what is
    // in `holding` is kept.
    const holding = new Set<string>();
    let releasing = true;
    const deleted = new Set<string>();
    const releaser = (async () => {
      while (releasing) {
        for (const object of requests.list()) {
          const name = object.metadata.name;
          if (deleted.has(name) || object.metadata.deletionTimestamp) continue;
          const phase = (object.status as { phase?: string } | undefined)?.phase;
          const held = Date.now() - (grantedAt.get(name) ?? Date.now());
          const done =
            (phase === 'Granted' && held > 300) || phase === 'Failed' || phase === 'Released';
          if (!done || holding.has(name)) continue;
          try {
            await admin.delete(simlockPath('leaseRequest', { namespace: NAMESPACE, name }));
            deleted.add(name);
          } catch (error) {
            if (isNotFound(error)) deleted.add(name);
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();

    // --- load and failures --------------------------------------------------------------------
    /** When each failure happened, for the messages of failed checks. */
    const events: string[] = [];
    const created: string[] = [];
    const started = Date.now();
    const create = async (name: string) => {
      await admin.create(
        simlockPath('leaseRequest', { namespace: NAMESPACE }),
        aLeaseRequest(name).ios('iPhone 16').spec({ holder: 'reliability' }).obj(),
      );
      created.push(name);
    };
    /** Set once the last failure is over: the load runs until then, and CHAOS_MS at least. */
    let failuresOver = false;
    const load = (async () => {
      let next = 0;
      while (!failuresOver || Date.now() - started < CHAOS_MS) {
        const outstanding = created.filter((name) => !outcomes.get(name)?.size).length;
        if (outstanding < OUTSTANDING) await create(`r-${next++}`).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
    })();
    // A moment already past is now (Node 24 warns of a negative timeout, where 20 took it as 1).
    const at = (from: number, to: number) =>
      new Promise((resolve) =>
        setTimeout(
          resolve,
          Math.max(0, from + Math.random() * (to - from) - (Date.now() - started)),
        ),
      );
    await at(3000, 6000);
    await replicas.killLeader();
    await at(8000, 10_000);
    events.push(`agent ${agents[1]?.name ?? ''} killed at ${new Date().toISOString()}`);
    await agents[1]?.restart('SIGKILL');
    events.push(`agent ${agents[1]?.name ?? ''} running again at ${new Date().toISOString()}`);
    await at(12_000, 15_000);
    await replicas.killLeader();
    await at(16_000, 18_000);
    events.push(`API server restart at ${new Date().toISOString()}`);
    await controlPlane?.restartApiServer();
    await at(19_000, 21_000);
    events.push(`etcd restart at ${new Date().toISOString()}`);
    await controlPlane?.restartEtcd();
    events.push(`etcd back at ${new Date().toISOString()}`);
    await at(24_000, 27_000);
    await replicas.killLeader();
    const lastKillAt = Date.now();
    let cutAt: number | undefined;
    let healedAt: number | undefined;
    if (cutOff) {
      // Only once the fleet grants again after the last leader kill (and etcd's restart, whose
      // length varies): a failover keeps a new leader from dispatching for a few seconds, and this
      // step is about the agent, so the others must be able to grant while it is away.
      await at(31_000, 31_500);
      await eventually(
        () => ([...grantedAt.values()].some((at) => at > lastKillAt) ? true : undefined),
        { timeoutMs: 30_000, intervalMs: 100, what: 'a grant after the last leader kill' },
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; ${events.join('; ')}`);
      });
      events.push(`agent rel-c cut off at ${new Date().toISOString()}`);
      await cutOff.cut();
      cutAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, PARTITION_MS));
      await cutOff.heal();
      healedAt = Date.now();
      events.push(`agent rel-c back at ${new Date().toISOString()}`);
    }
    failuresOver = true;
    await load;

    // --- everything settles -------------------------------------------------------------------
    await eventually(
      () => {
        const left = created.filter((name) => !deleted.has(name));
        return left.length === 0 && requests.list().length === 0 ? true : undefined;
      },
      { timeoutMs: 40_000, intervalMs: 200, what: 'every request ended and let go' },
    ).catch(async (error: unknown) => {
      const stuck = requests
        .list()
        .map((object) => `${object.metadata.name}: ${JSON.stringify(object.status ?? {})}`);
      const views = await Promise.all(agents.map(describeAgent));
      throw new Error(
        `${(error as Error).message}; still there: ${stuck.join('; ')}; ${events.join('; ')}; ` +
          `agents: ${views.join(' | ')}`,
      );
    });

    // --- the controller sees the fleet again -----------------------------------------------------
    // After etcd's restart its informers may still be backing off, and a request admitted while it
    // sees every worker away fails NO_CAPACITY at once, as it should. Probe until one is granted.
    let probes = 0;
    await eventually(
      async () => {
        const name = `probe-${probes}`;
        if (!created.includes(name)) await create(name);
        const seen = outcomes.get(name);
        if (seen?.has('granted')) return true;
        if (seen?.size) probes++;
        return undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250, what: 'a probe request granted after the restarts' },
    );

    // --- reasons converge to the truth: fill every slot, then two more wait ----------------------
    const holders = ['hold-0', 'hold-1', 'hold-2', 'hold-3', 'hold-4', 'hold-5'];
    for (const name of holders) holding.add(name);
    for (const name of holders) await create(name);
    await eventually(
      () => (holders.every((name) => outcomes.get(name)?.has('granted')) ? true : undefined),
      { timeoutMs: 30_000, what: 'six holders granted' },
    ).catch(async (error: unknown) => {
      const seen = holders.map(
        (name) => `${name}: ${JSON.stringify(requests.get(`${NAMESPACE}/${name}`)?.status ?? {})}`,
      );
      const views = await Promise.all(agents.map(describeAgent));
      const live = leases.list().map((lease) => {
        const phase = (lease.status as { phase?: string } | undefined)?.phase ?? '-';
        const worker = (lease.spec as { worker?: string } | undefined)?.worker ?? '-';
        const going = lease.metadata.deletionTimestamp ? ' being deleted' : '';
        return `${lease.metadata.name} on ${worker} ${phase}${going}`;
      });
      throw new Error(
        `${(error as Error).message}; seen: ${seen.join('; ')}; ${events.join('; ')}; ` +
          `leases: ${live.join(', ')}; agents: ${views.join(' | ')}`,
      );
    });
    for (const name of ['wait-0', 'wait-1']) {
      holding.add(name);
      await create(name);
    }
    const workers = agents.map((agent) => agent.name).sort();
    await eventually(
      () =>
        ['wait-0', 'wait-1'].every((name) => {
          const status = requests.get(`${NAMESPACE}/${name}`)?.status as
            | {
                phase?: string;
                workers?: WorkerReasonItem[];
              }
            | undefined;
          const reasons = reasonsByWorker(status).map(
            (entry) => `${entry.worker}: ${entry.reason} ${entry.capacityReason ?? ''}`,
          );
          return (
            status?.phase === 'Waiting' &&
            reasons.join(', ') ===
              workers.map((worker) => `${worker}: full platform-running-limit`).join(', ')
          );
        })
          ? true
          : undefined,
      { timeoutMs: 20_000, what: 'waiting reasons: every worker full' },
    ).catch((error: unknown) => {
      const seen = ['wait-0', 'wait-1'].map((name) =>
        JSON.stringify(requests.get(`${NAMESPACE}/${name}`)?.status ?? {}),
      );
      throw new Error(`${(error as Error).message}; seen: ${seen.join('; ')}`);
    });
    holding.clear();
    await eventually(() => (requests.list().length === 0 ? true : undefined), {
      timeoutMs: 30_000,
      what: 'the last requests granted and let go',
    });

    releasing = false;
    sampling = false;
    await Promise.all([releaser, sampler]);
    await Promise.all([leases.stop(), requests.stop()]);

    // --- the verdict ----------------------------------------------------------------------------
    expect(replicas.kills).toBe(3);
    if (cutAt !== undefined && healedAt !== undefined) {
      // The others went on granting while rel-c was away.
      const grantedWhileAway = created.filter((name) => {
        const at = grantedAt.get(name) ?? 0;
        return at > (cutAt ?? 0) && at < (healedAt ?? 0) && grantedOn.get(name) !== 'rel-c';
      });
      expect(grantedWhileAway.length, events.join('; ')).toBeGreaterThan(0);
      // How soon the healed host was used again (docs/OPERATIONS.md §1 quotes it).
      const backAt = Math.min(
        ...created
          .filter((name) => grantedOn.get(name) === 'rel-c')
          .map((name) => grantedAt.get(name) ?? Infinity)
          .filter((at) => at > (healedAt ?? 0)),
      );
      console.info(`reliability: rel-c granted again ${backAt - healedAt} ms after it was healed`);
    }
    expect(snapshots).toBeGreaterThan(100);
    expect(violations, events.join('; ')).toEqual([]);
    for (const name of created) {
      const ended = [...(outcomes.get(name) ?? [])];
      expect(ended.length, `${name} never ended`).toBeGreaterThan(0);
      for (const outcome of ended) {
        expect(outcome, `${name} ended ${outcome}`).toMatch(/^(granted|released|failed:[A-Z_]+)$/);
      }
      expect(
        grantedUids.get(name)?.size ?? 0,
        `${name} granted under two Leases (${dispatches.get(name)?.size ?? 0} dispatches)`,
      ).toBeLessThan(2);
    }
    // Most requests were granted: the failures did not turn the load into refusals.
    const granted = created.filter((name) => outcomes.get(name)?.has('granted')).length;
    expect(granted).toBeGreaterThan(created.length / 2);
  }, 180_000);
});
