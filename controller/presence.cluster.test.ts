// A waiting request shows a worker that went away within moments of its heartbeat lapsing, however
// recently its reasons were written: a change of presence is not held back by the reason-write
// interval that coalesces position updates (status.ts, presencePart; write-queue.ts). On the code
// before, the reason waited out the interval (here 8 s) behind the last write.
import { afterEach, describe, expect, it } from 'vitest';
import { iosFullStatus, iosStatus } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { controllerStories, takingRequests } from '../test/cluster/controller.js';
import { reasonsByWorker } from '../api/index.js';
import { KubeClient, LeaderElector, silentLogger, systemClock } from '../runtime/index.js';
import { ApiContact } from './api-contact.js';

const cluster = useCluster('presence');
const { setup, metric } = controllerStories(cluster);
const electors: LeaderElector[] = [];
/** Renewals held by a story: let go after it, whatever happened in it, so its elector can stop. */
const holds: (() => void)[] = [];
afterEach(async () => {
  for (const letGo of holds.splice(0)) letGo();
  await Promise.all(electors.splice(0).map((elector) => elector.stop()));
});

const INTERVAL_MS = 8000;

describe('a waiting request and a worker whose heartbeat lapses', () => {
  it('reads disconnected within two seconds of the lapse, just after its reasons were written', async () => {
    const { fleet, start, metrics } = await setup({ reasonWriteIntervalMs: INTERVAL_MS });
    // What an operator's dashboard reads: simlock_workers by state.
    const workers = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        (await metrics.workers.get()).values
          .filter((value) => value.value > 0)
          .map((value) => [String(value.labels.state), value.value]),
      );
    const a = await fleet.addWorker('a', { status: iosFullStatus() });
    const b = await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const full = { reason: 'full', capacityReason: 'platform-running-limit' };
    await fleet.requestWhere(
      'r1',
      (request) =>
        request.status?.phase === 'Waiting' && reasonsByWorker(request.status).length === 2,
      INTERVAL_MS + 10_000,
    );
    // Its reasons were just written; a's heartbeat (2 s, renewed 1 s ago) lapses in a second.
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    const lapsesAt = Date.now() + 1000;
    const request = await fleet.requestWhere(
      'r1',
      (seen) => reasonsByWorker(seen.status)[0]?.reason === 'disconnected',
      INTERVAL_MS,
    );
    expect(Date.now() - lapsesAt).toBeLessThan(2000);
    expect(reasonsByWorker(request.status)).toEqual([
      { worker: a, reason: 'disconnected' },
      { worker: b, ...full },
    ]);
    expect(await workers()).toEqual({ ready: 1, disconnected: 1 });

    // And back: renewed, it is full again as soon as that is seen.
    await fleet.heartbeat('a');
    const renewedAt = Date.now();
    await fleet.requestWhere(
      'r1',
      (seen) => reasonsByWorker(seen.status)[0]?.reason === 'full',
      INTERVAL_MS,
    );
    expect(Date.now() - renewedAt).toBeLessThan(2000);
    expect(await workers()).toEqual({ ready: 2 });
  });
});

// A worker cut off while a dispatch to it is unanswered: the controller withdraws the dispatch and
// remembers the silence against the view it routed on. The agent comes back with the very same
// status (its devices did not change while it was away), so only its heartbeat says it is back.
// On the code before, the silence was held while the view's revision stayed, and the revision
// moved only with the agent's status, not with its connection: the worker read `disconnected`
// for good and nothing was dispatched to it again (the reliability test's rel-c).
describe('a worker that comes back from a cut with the same status', () => {
  it('is dispatched to again and grants, without its status changing', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const first = await eventually(() => fleet.lease('r1'), { what: 'lease r1 dispatched' });
    expect(first.spec.worker).toBe(fleet.name('a'));

    // a is cut off before it answers: its heartbeat (2 s, renewed 1 s ago) lapses in a second.
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    await fleet.requestWhere(
      'r1',
      (seen) =>
        seen.status?.phase === 'Waiting' &&
        reasonsByWorker(seen.status)[0]?.reason === 'disconnected',
    );
    await fleet.leaseGone('r1');

    // Back, with the status it had: the request goes to it again and is granted there.
    await fleet.heartbeat('a');
    const renewedAt = Date.now();
    const again = await eventually(
      async () => {
        const lease = await fleet.lease('r1');
        return lease && lease.metadata.uid !== first.metadata.uid ? lease : undefined;
      },
      { what: 'lease r1 dispatched again', timeoutMs: 10_000 },
    );
    const redispatchMs = Date.now() - renewedAt;
    expect(again.spec.worker).toBe(fleet.name('a'));
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    // Seen within a walk of the renewal: the heartbeat's event moves the view's revision.
    expect(redispatchMs).toBeLessThan(3000);
  });
});

// A worker connected all along whose agent does not see a Lease in time (its watch was down after
// a cut that did not outlast its heartbeat): the dispatch is withdrawn, and the agent, back on its
// watch, finds nothing to answer and writes nothing new. On the code before, the silence was held
// until the worker's status changed, which an idle worker's never does: `disconnected` for good.
describe('a worker that left a dispatch unanswered while connected', () => {
  it('is asked again once its silence was held as long as it had to answer', async () => {
    const dispatchTimeoutMs = 1500;
    const { fleet, start } = await setup({ dispatchTimeoutMs });
    await fleet.addWorker('a', { status: iosStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const first = await eventually(() => fleet.lease('r1'), { what: 'lease r1 dispatched' });
    await fleet.requestWhere(
      'r1',
      (seen) =>
        seen.status?.phase === 'Waiting' &&
        reasonsByWorker(seen.status)[0]?.reason === 'disconnected',
    );
    const again = await eventually(
      async () => {
        const lease = await fleet.lease('r1');
        return lease && lease.metadata.uid !== first.metadata.uid ? lease : undefined;
      },
      { what: 'lease r1 dispatched again', timeoutMs: 10_000 },
    );
    expect(again.spec.worker).toBe(fleet.name('a'));
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
  });
});

describe('a dispatch whose worker goes away before it answers (ADR 0030)', () => {
  it('reads Waiting, disconnected, within a second or two of the lapse, not at the end of the held dispatch', async () => {
    // The Dispatched status is held with its Event until the agent answers (here: never), at
    // most the hold (60 s): the request that leaves it is written as soon as its reasons are due.
    const { fleet, start } = await setup({ dispatchEventHoldMs: 60_000 });
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await eventually(() => fleet.lease('r1'), { what: "r1's Lease" });
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    const lapsesAt = Date.now() + 1000;
    const request = await fleet.requestWhere(
      'r1',
      (seen) => reasonsByWorker(seen.status)[0]?.reason === 'disconnected',
      20_000,
    );
    expect(Date.now() - lapsesAt).toBeLessThan(3000);
    expect(request.status?.phase).toBe('Waiting');
    expect(reasonsByWorker(request.status)).toMatchObject([{ worker: a }]);
  });
});

// etcd restarting: the agents cannot renew their heartbeats, and the controller cannot renew its
// leader Lease either. A lapse then is the control plane's silence, not the worker's absence: it is
// held, the dispatch waiting on the worker is kept, and once the API server answers again the
// worker has a heartbeat period to renew. On the code before, the lapse was judged at once: the
// dispatch was given up (in the soak, at every etcd restart) and a request admitted meanwhile
// failed NO_CAPACITY. The leader election here is the product's, on the real API server; its
// client holds one renewal (as kube-apiserver holds a write while etcd is down) until told.
describe('a heartbeat that lapses while the API server does not answer the controller', () => {
  async function silentControlPlane() {
    const contact = new ApiContact();
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const replace = client.replace.bind(client);
    let holding = false;
    let held: (() => void) | undefined;
    client.replace = async (...args) => {
      if (holding) await new Promise<void>((resolve) => (held = resolve));
      return replace(...args);
    };
    holds.push(() => {
      holding = false;
      held?.();
    });
    const { fleet, reconciler, metrics, start } = await setup({
      apiContact: contact,
      dispatchTimeoutMs: 60_000,
    });
    const elector = new LeaderElector({
      client,
      namespace: fleet.namespace,
      name: 'presence-leader',
      identity: 'presence-test',
      clock: systemClock(),
      log: silentLogger,
      leaseDurationSeconds: 3,
      renewals: contact,
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    });
    electors.push(elector);
    elector.start();
    await eventually(() => (elector.isLeader ? true : undefined), { what: 'leading' });
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await takingRequests(reconciler, fleet.name('a'));
    await fleet.createRequest('r1', { platform: 'ios' });
    const lease = await eventually(() => fleet.lease('r1'), { what: 'the dispatch to a' });
    // The control plane goes silent: the next renewal is held. a's heartbeat lapses meanwhile.
    holding = true;
    await eventually(() => (held ? true : undefined), { what: 'a renewal held' });
    const silentFrom = Date.now();
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    await eventually(
      async () =>
        (await metric(metrics, 'simlock_heartbeat_lapses_held_total')) > 0 ? true : undefined,
      { what: 'the lapse held' },
    );
    const view = reconciler.snapshot().workers.find((worker) => worker.name === fleet.name('a'));
    expect(view?.connection).toBe('connected');
    expect((await fleet.lease('r1'))?.metadata.uid).toBe(lease.metadata.uid);
    expect((await fleet.request('r1')).status?.phase).not.toBe('Failed');
    // The control plane answers again, more than a second after the renewal was sent.
    await eventually(() => (Date.now() - silentFrom > 1100 ? true : undefined), {
      what: 'a second of silence',
    });
    holding = false;
    held?.();
    const answeredAt = Date.now();
    return { fleet, reconciler, lease, answeredAt };
  }

  it('is held, and the dispatch kept: the agent renews once the API server answers, and grants', async () => {
    const { fleet, lease } = await silentControlPlane();
    await fleet.heartbeat('a');
    const granted = await fleet.grant('r1');
    expect(granted.metadata.uid).toBe(lease.metadata.uid);
    const request = await fleet.phase('r1', 'Granted');
    expect(request.status?.worker).toBe(fleet.name('a'));
  });

  it('then lapses a heartbeat period after the API server answers, if the agent does not renew', async () => {
    const { fleet, reconciler, answeredAt } = await silentControlPlane();
    await eventually(
      () =>
        reconciler.snapshot().workers.find((worker) => worker.name === fleet.name('a'))
          ?.connection === 'disconnected'
          ? true
          : undefined,
      { what: 'a disconnected' },
    );
    // Its heartbeat (2 s) had that long from the answer, not from its last renewal.
    expect(Date.now() - answeredAt).toBeGreaterThanOrEqual(1900);
    await fleet.requestWhere(
      'r1',
      (request) => reasonsByWorker(request.status)[0]?.reason === 'disconnected',
    );
  });
});
