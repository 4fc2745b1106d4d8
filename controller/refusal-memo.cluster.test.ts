// A refusal is believed until the worker's view first changes, and not after, even when the view
// comes back to exactly what it was. The test plays the agent through the API (Worker status and
// Lease status written directly), so it chooses the order of the refusal and the view writes. A
// refusal because every device of the request is taken holds while they stay taken, though the rest
// of the view moves.
import { afterEach, describe, expect, it } from 'vitest';
import { type WorkerStatus, reasonsByWorker } from '../api/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { TestFleet, iosFullStatus, iosStatus, physicalIphone } from '../test/cluster/fleet.js';
import { iosCapacity, iphoneSimulator } from '../test/fixtures/workers.js';
import { controllerFor } from '../test/cluster/controller.js';
import type { Reconciler } from './index.js';

const cluster = useCluster('memo');
const running: Reconciler[] = [];
const fleets: TestFleet[] = [];

async function setup() {
  const fleet = await TestFleet.create(cluster);
  fleets.push(fleet);
  const reconciler = controllerFor(cluster, fleet);
  running.push(reconciler);
  return { fleet, start: () => reconciler.start() };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((reconciler) => reconciler.stop()));
  await Promise.all(fleets.splice(0).map((fleet) => fleet.cleanup()));
});

/** Waits for the refusal to be taken in: the Lease withdrawn and the request waiting on `a`. */
async function refusalTakenIn(fleet: TestFleet, capacityReason: string): Promise<void> {
  await fleet.leaseGone('r1');
  await fleet.requestWhere(
    'r1',
    (request) =>
      request.status?.phase === 'Waiting' &&
      reasonsByWorker(request.status)[0]?.reason === 'full' &&
      reasonsByWorker(request.status)[0]?.capacityReason === capacityReason,
  );
}

describe('a worker whose view comes back to what it was when it refused', () => {
  it('virtual: refused at 1 of 2 iOS slots, then 2 of 2, then 1 of 2 again: granted there', async () => {
    const { fleet, start } = await setup();
    const oneOfTwo: WorkerStatus = iosStatus({
      capacity: {
        global: { limit: 4, running: 1, evictable: 0 },
        platforms: { ios: { limit: 2, running: 1, evictable: 0, atRamBudget: false } },
      },
    });
    const a = await fleet.addWorker('a', { status: oneOfTwo });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    // The last slot went to the worker's own queue as the dispatch arrived: it refuses, and then
    // reports itself full.
    await fleet.refuse('r1', { code: 'NO_CAPACITY', capacityReason: 'platform-running-limit' });
    await refusalTakenIn(fleet, 'platform-running-limit');
    await fleet.setStatus('a', iosFullStatus());
    // The slot frees: the worker reports exactly the view it refused at.
    await fleet.setStatus('a', oneOfTwo);
    await eventually(() => fleet.lease('r1'), { what: 'a second dispatch to the worker' });
    await fleet.grant('r1');
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.worker).toBe(a);
  });

  it('physical: refused as not present while the view said present; granted once it reads present again', async () => {
    const { fleet, start } = await setup();
    const present = iosStatus({ devices: [physicalIphone()] });
    const a = await fleet.addWorker('a', { status: present });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', physical: true, model: 'iPhone 15 Pro' });
    // The agent's refusal reaches the API server before its next view write.
    await fleet.refuse('r1', { code: 'NO_CAPACITY', capacityReason: 'device-not-present' });
    await refusalTakenIn(fleet, 'device-not-present');
    await fleet.setStatus(
      'a',
      iosStatus({
        devices: [physicalIphone({ presence: { present: false, reason: 'not-present' } })],
      }),
    );
    await fleet.setStatus('a', present);
    await eventually(() => fleet.lease('r1'), { what: 'a second dispatch to the worker' });
    await fleet.answer('r1', {
      phase: 'Granted',
      device: {
        id: physicalIphone().id,
        name: physicalIphone().name,
        model: 'iPhone 15 Pro',
        platform: 'ios',
        os: '18.4',
        physical: true,
      },
    });
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.worker).toBe(a);
  });
});

describe('a worker whose only iPad is leased, among iPhones that come and go', () => {
  it('is not asked for the iPad again until it is ready; then it is granted there', async () => {
    const { fleet, start } = await setup();
    const ipad = iphoneSimulator('ipad-1', {
      name: 'iPad Pro',
      model: 'iPad Pro',
      class: 'tablet',
    });
    // Room for four: the iPhone dispatch below takes a slot (assumed) and leaves room.
    const withIphones = (running: number, ipadState: 'leased' | 'ready') =>
      iosStatus({
        capacity: iosCapacity({ running, limit: 4 }, { running, limit: 4 }),
        devices: [
          { ...ipad, state: ipadState },
          ...Array.from({ length: running - 1 }, (_, n) =>
            iphoneSimulator(`sim-${n}`, { state: 'leased' }),
          ),
        ],
      });
    const a = await fleet.addWorker('a', { status: withIphones(1, 'leased') });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPad Pro' });
    // The agent: every iPad it has is in use (no capacity reason).
    await fleet.refuse('r1', {
      code: 'NO_CAPACITY',
      message: 'every iPad Pro device on this host is in use',
    });
    await fleet.leaseGone('r1');
    // An iPhone is granted and given back: two new views, the iPad leased in both.
    await fleet.setStatus('a', withIphones(2, 'leased'));
    await fleet.setStatus('a', withIphones(1, 'leased'));
    // An iPhone request made after those views is dispatched: the walk has seen them, and has not
    // sent the iPad request to `a` again.
    await fleet.createRequest('r2', { platform: 'ios', model: 'iPhone 16' });
    await eventually(() => fleet.lease('r2'), { what: 'the iPhone dispatch' });
    expect(await fleet.lease('r1')).toBeUndefined();
    // Its reasons are written once the reason-write interval allows (read at once, they were not
    // always there yet): `a` full for it.
    const waiting = await fleet.requestWhere(
      'r1',
      (request) => reasonsByWorker(request.status).length > 0,
    );
    expect(reasonsByWorker(waiting.status)[0]).toEqual({ worker: a, reason: 'full' });
    // The iPad is ready again: asked at once, and granted.
    await fleet.setStatus('a', withIphones(1, 'ready'));
    await eventually(() => fleet.lease('r1'), { what: 'the iPad dispatch' });
    await fleet.grant('r1', 'ipad-1');
    expect((await fleet.phase('r1', 'Granted')).status?.worker).toBe(a);
  });
});
