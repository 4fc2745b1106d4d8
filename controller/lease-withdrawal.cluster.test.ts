// A withdrawal that races its agent: the controller gives up on a dispatch that was not answered in
// time, and in the same moments the agent first acknowledges the Lease (Pending) and then grants it.
// The controller's withdrawal is conditional on the Lease it read, so the acknowledgment makes it
// conflict; the grant lands just after the controller read the Lease again. Deleting the Lease then
// (it was not granted when read) would take back a device the agent had just granted, and the request
// would be granted a second time elsewhere. The withdrawal is tried on the version read again, which
// the grant makes conflict in turn: the grant is kept. The interleaving is chosen by running the
// agent's writes from the controller's own requests to the real API server, at those moments.
// And a dispatch given up while its create is still held: the withdrawal waits for the create, so
// that the request is never dispatched elsewhere while a Lease of it may yet be made (before, both
// landed and both agents granted: the soak's "granted under two Leases"); and a create whose answer
// is lost is made again where it was, not elsewhere.
import { afterEach, describe, expect, it } from 'vitest';
import {
  LEASE_WITHDRAWN_ANNOTATION,
  WORKER_LABEL,
  leaseNamespaceOf,
  reasonsByWorker,
} from '../api/index.js';
import { pathOfLease } from '../test/cluster/leases.js';
import { aLease } from '../test/fixtures/objects.js';
import {
  KubeClient,
  KubeUnavailableError,
  isAlreadyExists,
  isNotFound,
  simlockPath,
} from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { TestFleet, iosStatus, type LeaseView } from '../test/cluster/fleet.js';
import { controllerFor } from '../test/cluster/controller.js';
import type { Reconciler, ReconcilerOptions } from './index.js';

const cluster = useCluster('withdrawal');
const running: Reconciler[] = [];
const fleets: TestFleet[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((reconciler) => reconciler.stop()));
  await Promise.all(fleets.splice(0).map((fleet) => fleet.cleanup()));
});

const isWithdrawal = (body: unknown): boolean =>
  (body as { metadata?: { annotations?: Record<string, string> } } | undefined)?.metadata
    ?.annotations?.[LEASE_WITHDRAWN_ANNOTATION] !== undefined;

describe('a dispatch withdrawn while its agent acknowledges and then grants it', () => {
  it('keeps the grant: one Lease, never deleted, and the request Granted on it', async () => {
    const fleet = await TestFleet.create(cluster);
    fleets.push(fleet);
    await fleet.addWorker('a', { status: iosStatus() });
    // The Lease of r1 is in a's namespace, named by r1's UID (ADR 0034): the one Lease there.
    const leases = simlockPath('lease', { namespace: leaseNamespaceOf(fleet.name('a')) });
    const isLeasePath = (path: string) =>
      path.startsWith(`${leases}/`) && !path.endsWith('/status');
    const acknowledge = async () => {
      const lease = await fleet.lease('r1');
      if (!lease) throw new Error('no Lease of r1');
      await cluster.admin.patch(pathOfLease(lease, 'status'), {
        status: { phase: 'Pending', message: 'accepted: preparing the device' },
      });
    };
    let stage: 'dispatched' | 'acknowledged' | 'granted' = 'dispatched';
    let deletes = 0;

    // The controller's own client, with the agent's writes run at the chosen moments.
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const patch = client.patch.bind(client);
    const get = client.get.bind(client);
    const remove = client.delete.bind(client);
    client.patch = async (path, body, ...rest) => {
      if (isLeasePath(path) && isWithdrawal(body) && stage === 'dispatched') {
        await acknowledge(); // the agent's acknowledgment lands first: this write conflicts
        stage = 'acknowledged';
      }
      return patch(path, body, ...rest);
    };
    client.get = async (path, ...rest) => {
      const answer = await get(path, ...rest);
      if (isLeasePath(path) && stage === 'acknowledged') {
        // The agent grants the very version the controller has just read again.
        stage = 'granted';
        await fleet.grant('r1');
      }
      return answer;
    };
    client.delete = (path, ...rest) => {
      if (isLeasePath(path)) deletes++;
      return remove(path, ...rest);
    };

    const reconciler = controllerFor(cluster, fleet, { client, dispatchTimeoutMs: 1_000 });
    running.push(reconciler);
    await reconciler.start();
    await fleet.createRequest('r1', { platform: 'ios' });
    const first = await eventually(() => fleet.lease('r1'), { what: 'the dispatch' });

    const granted = await fleet.phase('r1', 'Granted', 20_000);
    expect(stage).toBe('granted');
    const lease = await fleet.lease('r1');
    expect(lease?.metadata.uid).toBe(first.metadata.uid);
    expect(lease?.metadata.deletionTimestamp).toBeUndefined();
    expect(lease?.status?.phase).toBe('Granted');
    expect(granted.status?.device?.id).toBe('sim-1');
    // The grant that won names its worker, in the status and in its condition.
    expect(granted.status?.worker).toBe(fleet.name('a'));
    expect(granted.status?.conditions).toContainEqual(
      expect.objectContaining({
        type: 'Granted',
        message: expect.stringContaining(fleet.name('a')) as unknown,
      }),
    );
    expect(deletes).toBe(0);
  });
});

describe('a dispatch given up while the API server holds its create', () => {
  it('waits for the create, withdraws the Lease it made, and only then dispatches elsewhere', async () => {
    const fleet = await TestFleet.create(cluster);
    fleets.push(fleet);
    await fleet.addWorker('a', { status: iosStatus() });
    const inA = simlockPath('lease', { namespace: leaseNamespaceOf(fleet.name('a')) });
    const inB = simlockPath('lease', { namespace: leaseNamespaceOf(fleet.name('b')) });

    // The controller's own client; its first Lease create is held, as an API server waiting on
    // etcd holds it, until the test lets it go. What it does to Leases, in order.
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const create = client.create.bind(client);
    const remove = client.delete.bind(client);
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const calls: string[] = [];
    client.create = async (path, ...rest) => {
      if (path !== inA && path !== inB) return create(path, ...rest);
      const where = path === inA ? 'a' : 'b';
      if (calls.length === 0) {
        calls.push('create a held');
        await held;
      }
      // A create that finds the worker's namespace not made yet makes it (ADR 0034) and is
      // tried again then: only its landing is told.
      const answer = await create(path, ...rest);
      calls.push(`create ${where}`);
      return answer;
    };
    client.delete = async (path, ...rest) => {
      const answer = await remove(path, ...rest);
      if (path.startsWith(`${inA}/`)) calls.push('delete a');
      return answer;
    };

    const reconciler = controllerFor(cluster, fleet, { client });
    running.push(reconciler);
    await reconciler.start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await eventually(() => (calls.length > 0 ? true : undefined), { what: 'the Lease create' });
    // While the create is held, b joins and a goes away: the dispatch to a is given up, and a
    // walk that knows b tells the request so (a disconnected, b named)...
    await fleet.addWorker('b', { status: iosStatus() });
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    const walked = await fleet.requestWhere(
      'r1',
      (request) => {
        const reasons = reasonsByWorker(request.status);
        const of = (short: string) => reasons.find((reason) => reason.worker === fleet.name(short));
        return of('a')?.reason === 'disconnected' && of('b') !== undefined;
      },
      15_000,
    );
    // ...and does not dispatch it there: its Lease on a may yet be made.
    expect(walked.status?.phase).toBe('Waiting');
    expect(calls).toEqual(['create a held']);

    // The create lands; its Lease is withdrawn (deleted); then the request goes to b.
    letGo();
    await eventually(() => (calls.includes('create b') ? true : undefined), {
      what: 'the dispatch to b',
    });
    expect(calls).toEqual(['create a held', 'create a', 'delete a', 'create b']);
    const lease = await fleet.grant('r1');
    expect(lease.spec.worker).toBe(fleet.name('b'));
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.worker).toBe(fleet.name('b'));
    const kept = await fleet.lease('r1');
    expect(kept?.metadata.uid).toBe(lease.metadata.uid);
  });
});

describe('a Lease create that gets no answer', () => {
  it('is made again on the same worker, and the request is on the Lease the first one made', async () => {
    const fleet = await TestFleet.create(cluster);
    fleets.push(fleet);
    await fleet.addWorker('a', { status: iosStatus() });
    await fleet.addWorker('b', { status: iosStatus() });
    const leaseCreates = new Map([
      [simlockPath('lease', { namespace: leaseNamespaceOf(fleet.name('a')) }), 'a'],
      [simlockPath('lease', { namespace: leaseNamespaceOf(fleet.name('b')) }), 'b'],
    ]);
    // The controller's own client: its first Lease create is made, and its answer lost (a create
    // that outlived its client's timeout while the API server waited on etcd). Meanwhile its
    // worker is drained, and the controller knows: a walk now would send the request elsewhere.
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const create = client.create.bind(client);
    const creates: { worker: string; uid?: string; error?: string }[] = [];
    client.create = async (path, ...rest) => {
      const worker = leaseCreates.get(path);
      if (worker === undefined) return create(path, ...rest);
      try {
        const made = await create(path, ...rest);
        const uid = (made as { metadata?: { uid?: string } }).metadata?.uid;
        if (creates.length > 0) creates.push({ worker, ...(uid ? { uid } : {}) });
        else {
          creates.push({ worker, ...(uid ? { uid } : {}), error: 'no answer' });
          await fleet.drain(worker);
          await eventually(
            () =>
              reconciler
                .snapshot()
                .workers.some((view) => view.name === fleet.name(worker) && view.drained)
                ? true
                : undefined,
            { what: 'the drain seen by the controller' },
          );
          throw new KubeUnavailableError('POST: no answer within 30000 ms', {
            cause: new Error('timeout'),
          });
        }
        return made;
      } catch (error) {
        if (isAlreadyExists(error)) creates.push({ worker, error: 'AlreadyExists' });
        throw error;
      }
    };

    const reconciler = controllerFor(cluster, fleet, { client });
    running.push(reconciler);
    await reconciler.start();
    await fleet.createRequest('r1', { platform: 'ios' });
    const lease = await eventually(
      () => (creates.length >= 2 ? fleet.lease('r1') : Promise.resolve(undefined)),
      { what: 'the create made again' },
    );
    const first = creates[0];
    // Made again where it was made, found there, and adopted: never a Lease on the other worker.
    // (The drain stops new dispatches; this one was made before it.)
    expect(creates[1]).toEqual({ worker: first?.worker, error: 'AlreadyExists' });
    expect(lease.metadata.uid).toBe(first?.uid);
    await fleet.grant('r1');
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.worker).toBe(fleet.name(first?.worker ?? ''));
    expect(creates).toHaveLength(2);
  });
});

/**
 * Two iOS workers, a controller started on them (`options` its own), and r1 dispatched to one: its
 * Lease, the other.
 */
async function dispatchedToOneOfTwo(options: Partial<ReconcilerOptions> = {}) {
  const fleet = await TestFleet.create(cluster);
  fleets.push(fleet);
  await fleet.addWorker('a', { status: iosStatus() });
  await fleet.addWorker('b', { status: iosStatus() });
  const reconciler = controllerFor(cluster, fleet, options);
  running.push(reconciler);
  await reconciler.start();
  await fleet.createRequest('r1', { platform: 'ios' });
  const lease = await eventually(() => fleet.lease('r1'), { what: 'the dispatch' });
  const other = lease.spec.worker === fleet.name('a') ? fleet.name('b') : fleet.name('a');
  return { fleet, reconciler, lease, other };
}

/** A second Lease of the request `lease` dispatches, on `worker` (a held create that landed). */
function secondLease(lease: LeaseView, worker: string, finalizers?: string[]) {
  const second = aLease(lease.metadata.name)
    .labels({ ...lease.metadata.labels, [WORKER_LABEL]: worker })
    .spec({ ...lease.spec, worker });
  if (finalizers) second.finalizer(...finalizers);
  return cluster.admin.create(
    simlockPath('lease', { namespace: leaseNamespaceOf(worker) }),
    second.obj(),
  ) as Promise<LeaseView>;
}

/** What its agent writes to grant a Lease. */
const GRANTED = {
  status: {
    phase: 'Granted',
    device: {
      id: 'sim-1',
      name: 'iPhone 16',
      model: 'iPhone 16',
      platform: 'ios',
      os: '18.4',
      physical: false,
    },
  },
};

// A request on one Lease while another of its Leases, on another worker, is granted too (a create
// the API server held past its withdrawal, landing after the request went elsewhere): that Lease
// holds a device for nobody. The controller deletes it, by its uid, so that its agent reclaims the
// device, whether it comes before or after the request's own grant; its own Lease is left alone.
describe('a second Lease of a request, granted on another worker', () => {
  for (const when of ['after its own is granted', 'while its own is unanswered'] as const)
    it(`made ${when}: it is deleted, and the request is Granted on its own Lease`, async () => {
      const dispatched = await dispatchedToOneOfTwo();
      const { fleet } = dispatched;
      let own = dispatched.lease;
      if (when === 'after its own is granted') {
        own = await fleet.grant('r1');
        await fleet.phase('r1', 'Granted');
      }

      // The stray: the same request's Lease in the other worker's namespace, granted there.
      const stray = await eventually(
        () => secondLease(own, dispatched.other).catch(() => undefined),
        { what: `the stray Lease made on ${dispatched.other}` },
      );
      // Its agent grants it, unless the controller has deleted it already: either way it goes.
      await cluster.admin.patch(pathOfLease(stray, 'status'), GRANTED).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });

      await eventually(
        () =>
          cluster.admin
            .get(pathOfLease(stray))
            .then(() => undefined)
            .catch((error: unknown) => (isNotFound(error) ? true : undefined)),
        { what: 'the stray Lease deleted' },
      );
      if (when === 'while its own is unanswered') await fleet.grant('r1');
      const request = await fleet.phase('r1', 'Granted');
      expect(request.status?.worker).toBe(own.spec.worker);
      const kept = await fleet.lease('r1');
      expect(kept?.metadata.uid).toBe(own.metadata.uid);
      expect(kept?.metadata.deletionTimestamp).toBeUndefined();
      // Released, its own Lease goes with it.
      await cluster.admin.delete(
        simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
      );
      await fleet.requestGone('r1');
      await fleet.leaseGone('r1');
    });
});

// A controller that died with a create in flight (a dispatch it gave up, the create landing after
// it stopped) leaves the request two Leases: the one its status names, unanswered, and another its
// agent granted. The next controller takes the request up on the grant, and deletes the other.
describe('a request taken up with a granted Lease beside the unanswered one', () => {
  it('is Granted on the granted Lease, and the unanswered one is deleted', async () => {
    const {
      fleet,
      reconciler: first,
      lease: unanswered,
      other: worker,
    } = await dispatchedToOneOfTwo();
    await first.stop();

    // The Lease of the create that landed after the first controller stopped, granted.
    const landed = await secondLease(unanswered, worker, unanswered.metadata.finalizers);
    await cluster.admin.patch(pathOfLease(landed, 'status'), GRANTED);

    const next = controllerFor(cluster, fleet);
    running.push(next);
    await next.start();
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.worker).toBe(worker);
    expect(granted.status?.device?.id).toBe('sim-1');
    // Deleted (its agent, once it has seen that, takes its finalizer off: here nobody does).
    await eventually(
      () =>
        cluster.admin
          .get(pathOfLease(unanswered))
          .then((lease) => ((lease as LeaseView).metadata.deletionTimestamp ? true : undefined))
          .catch((error: unknown) => (isNotFound(error) ? true : undefined)),
      { what: 'the unanswered Lease deleted' },
    );
    const kept = (await cluster.admin.get(pathOfLease(landed))) as LeaseView;
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
  });
});

// A controller's watch may tell a Lease's news late: a new leader's, catching up, did so for
// seconds. The controller withdrew a refused Lease and sent the request elsewhere while its watch
// still showed that Lease refused, neither withdrawn nor gone. It is not another Lease of the
// request: the sweep deleted it again, a DELETE that found nothing, with a warning of a stray
// Lease that was none (the soak, after leader changes).
describe('a Lease the controller withdrew, still shown unwithdrawn by its watch', () => {
  it('is not deleted again as another Lease of the request', async () => {
    // The controller's own client: its Lease watch holds back the withdrawn Lease's news (its
    // withdrawal mark, its going) until the test lets it through; its deletes are recorded.
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const watch = client.watch.bind(client);
    const remove = client.delete.bind(client);
    const heldUids = new Set<string>();
    const heldBack: (() => void)[] = [];
    client.watch = (path, query, onEvent, signal, idleMs) =>
      watch(
        path,
        query,
        (event) => {
          const { metadata } = event.object as LeaseView;
          const late =
            heldUids.has(metadata.uid ?? '') &&
            (event.type === 'DELETED' || isWithdrawal(event.object));
          if (late) heldBack.push(() => onEvent(event));
          else onEvent(event);
        },
        signal,
        idleMs,
      );
    const deletes: string[] = [];
    client.delete = (path, ...rest) => {
      deletes.push(path);
      return remove(path, ...rest);
    };

    const { fleet, lease: refused, other } = await dispatchedToOneOfTwo({ client });
    heldUids.add(refused.metadata.uid ?? '');
    await fleet.refuse('r1', { code: 'NO_CAPACITY', capacityReason: 'ram-budget' });
    // Withdrawn (deleted outright), and dispatched to the other worker, which grants it.
    await eventually(
      async () => ((await fleet.lease('r1'))?.spec.worker === other ? true : undefined),
      { what: 'the dispatch to the other worker' },
    );
    await fleet.grant('r1');
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.worker).toBe(other);
    expect(heldBack.length).toBeGreaterThan(0);
    // Deleted once, by its withdrawal: not swept again while the watch still showed it.
    expect(deletes.filter((path) => path === pathOfLease(refused))).toHaveLength(1);
    for (const deliver of heldBack.splice(0)) deliver();
  });
});
