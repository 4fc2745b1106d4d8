// A released device is free once its agent has let go of the Lease (reclaimed the device and taken
// its finalizer off), not at the release: until then the agent holds it and refuses it to anyone,
// and a view that never showed the device taken (the agent writes takings late, ADR 0029) does not
// move when it is given back, so such a refusal would hold for good. The test plays the agent
// through the API and reads the order of the Lease events off one watch.
import { afterEach, describe, expect, it } from 'vitest';
import { LEASE_FINALIZER, reasonsByWorker } from '../api/index.js';
import { Informer, simlockPath } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { iosStatus, physicalIphone } from '../test/cluster/fleet.js';
import { leasesOfRequestsIn, pathOfLease, requestNameOf } from '../test/cluster/leases.js';
import { controllerStories } from '../test/cluster/controller.js';

const cluster = useCluster('reclaim');
const { setup } = controllerStories(cluster);
const watches: Informer[] = [];

afterEach(async () => {
  await Promise.all(watches.splice(0).map((watch) => watch.stop()));
});

describe('a device given back', () => {
  it('physical: a request waiting for the only iPhone is dispatched once the Lease of its release is gone, not before, and granted', async () => {
    const { fleet, start } = await setup();
    const iphone = physicalIphone();
    // The view the agent wrote before the grant, and never again: the iPhone was taken and given
    // back within the agent's wait.
    await fleet.addWorker('a', { status: iosStatus({ devices: [iphone] }) });
    const order: string[] = [];
    const watch = new Informer(fleet.admin, leasesOfRequestsIn(fleet.namespace));
    watches.push(watch);
    watch.on(({ type, object }) => {
      if (type !== 'updated') order.push(`${requestNameOf(object)} ${type}`);
    });
    watch.start();
    await start();

    const spec = { platform: 'ios', physical: true, model: 'iPhone 15 Pro' };
    await fleet.createRequest('r1', spec);
    await fleet.answer('r1', { phase: 'Granted', device: iphone }, { reclaims: false });
    await fleet.phase('r1', 'Granted');
    await fleet.createRequest('r2', spec);
    await fleet.requestWhere(
      'r2',
      (request) =>
        request.status?.phase === 'Waiting' &&
        reasonsByWorker(request.status)[0]?.reason === 'no-free-physical',
    );

    await fleet.admin.delete(
      simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
    );
    const deleting = await eventually(
      async () => {
        const lease = await fleet.lease('r1');
        return lease?.metadata.deletionTimestamp ? lease : undefined;
      },
      { what: 'the Lease of r1 being deleted' },
    );
    // The agent resets the iPhone, which takes a while; then it lets the Lease go.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await fleet.admin.patch(pathOfLease(deleting), {
      metadata: {
        finalizers: (deleting.metadata.finalizers ?? []).filter((f) => f !== LEASE_FINALIZER),
        resourceVersion: deleting.metadata.resourceVersion,
      },
    });

    await fleet.answer('r2', { phase: 'Granted', device: iphone });
    await fleet.phase('r2', 'Granted');
    expect(order).toEqual(['r1 added', 'r1 deleted', 'r2 added']);
  });
});
