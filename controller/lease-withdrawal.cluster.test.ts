// A withdrawal that races its agent: the controller gives up on a dispatch that was not answered in
// time, and in the same moments the agent first acknowledges the Lease (Pending) and then grants it.
// The controller's withdrawal is conditional on the Lease it read, so the acknowledgment makes it
// conflict; the grant lands just after the controller read the Lease again. Deleting the Lease then
// (it was not granted when read) would take back a device the agent had just granted, and the request
// would be granted a second time elsewhere. The withdrawal is tried on the version read again, which
// the grant makes conflict in turn: the grant is kept. The interleaving is chosen by running the
// agent's writes from the controller's own requests to the real API server, at those moments.
// And a withdrawal that finds no Lease because its create is still held: the Lease that lands later
// and is granted is the waiting request's (before, it held a device for nobody until it expired).
import { afterEach, describe, expect, it } from 'vitest';
import {
  LEASE_WITHDRAWN_ANNOTATION,
  WORKER_LABEL,
  leaseNamespaceOf,
  reasonsByWorker,
} from '../api/index.js';
import { pathOfLease } from '../test/cluster/leases.js';
import { KubeClient, isNotFound, simlockPath } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { TestFleet, iosStatus, type LeaseView } from '../test/cluster/fleet.js';
import { controllerFor } from '../test/cluster/controller.js';
import type { Reconciler } from './index.js';

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
  it('adopts the Lease that lands after the withdrawal found none, once its agent grants it', async () => {
    const fleet = await TestFleet.create(cluster);
    fleets.push(fleet);
    await fleet.addWorker('a', { status: iosStatus() });
    const leases = simlockPath('lease', { namespace: leaseNamespaceOf(fleet.name('a')) });

    // The controller's own client; its first Lease create is held, as an API server waiting on
    // etcd holds it, until the test lets it go.
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const create = client.create.bind(client);
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    // Tried (the first is held) and made: a create that finds the worker's namespace not made yet
    // makes it (ADR 0034) and is tried again then, as one create.
    let creates = 0;
    let made = 0;
    client.create = async (path, ...rest) => {
      if (path !== leases) return create(path, ...rest);
      if (creates++ === 0) await held;
      const answer = await create(path, ...rest);
      made++;
      return answer;
    };

    const reconciler = controllerFor(cluster, fleet, { client });
    running.push(reconciler);
    await reconciler.start();
    await fleet.createRequest('r1', { platform: 'ios' });
    // Dispatched: its Lease's create is in flight, held.
    await eventually(() => (creates > 0 ? true : undefined), { what: 'the Lease create' });
    // Its worker goes away while the create is held: the dispatch is given up, the withdrawal
    // finds no Lease, and the request waits again (the worker stays away: no new dispatch).
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    await fleet.requestWhere(
      'r1',
      (request) => reasonsByWorker(request.status)[0]?.reason === 'disconnected',
      15_000,
    );
    expect((await fleet.request('r1')).status?.phase).toBe('Waiting');
    expect(await fleet.lease('r1')).toBeUndefined();

    // The create lands and its agent grants it: the device is held for r1, which takes it.
    letGo();
    const landed = await eventually(() => fleet.lease('r1'), { what: 'the late Lease' });
    await fleet.grant('r1');
    const granted = await fleet.phase('r1', 'Granted', 15_000);
    expect(granted.status?.device?.id).toBe('sim-1');
    expect(granted.status?.worker).toBe(fleet.name('a'));
    const lease = await fleet.lease('r1');
    expect(lease?.metadata.uid).toBe(landed.metadata.uid);
    expect(lease?.metadata.deletionTimestamp).toBeUndefined();
    expect(made).toBe(1);
  });
});

// A request on one Lease while another of its Leases, on another worker, is granted too (a create
// the API server held past its withdrawal, landing after the request went elsewhere): that Lease
// holds a device for nobody. The controller deletes it, by its uid, so that its agent reclaims the
// device, whether it comes before or after the request's own grant; its own Lease is left alone.
describe('a second Lease of a request, granted on another worker', () => {
  for (const when of ['after its own is granted', 'while its own is unanswered'] as const)
    it(`made ${when}: it is deleted, and the request is Granted on its own Lease`, async () => {
      const fleet = await TestFleet.create(cluster);
      fleets.push(fleet);
      await fleet.addWorker('a', { status: iosStatus() });
      await fleet.addWorker('b', { status: iosStatus() });
      const reconciler = controllerFor(cluster, fleet);
      running.push(reconciler);
      await reconciler.start();
      await fleet.createRequest('r1', { platform: 'ios' });
      let own = await eventually(() => fleet.lease('r1'), { what: 'the dispatch' });
      if (when === 'after its own is granted') {
        own = await fleet.grant('r1');
        await fleet.phase('r1', 'Granted');
      }

      // The stray: the same request's Lease in the other worker's namespace, granted there.
      const worker = own.spec.worker === fleet.name('a') ? fleet.name('b') : fleet.name('a');
      const namespace = leaseNamespaceOf(worker);
      const stray = (await eventually(
        () =>
          cluster.admin
            .create(simlockPath('lease', { namespace }), {
              apiVersion: 'simlock.dev/v1alpha1',
              kind: 'Lease',
              metadata: {
                name: own.metadata.name,
                labels: { ...own.metadata.labels, [WORKER_LABEL]: worker },
              },
              spec: { ...own.spec, worker },
            })
            .catch(() => undefined),
        { what: `the stray Lease made in ${namespace}` },
      )) as LeaseView;
      const device = { id: 'sim-1', name: 'iPhone 16', model: 'iPhone 16', platform: 'ios' };
      // Its agent grants it, unless the controller has deleted it already: either way it goes.
      await cluster.admin
        .patch(pathOfLease(stray, 'status'), {
          status: { phase: 'Granted', device: { ...device, os: '18.4', physical: false } },
        })
        .catch((error: unknown) => {
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
