// The controller against the real API server, with the test playing the agents (DESIGN.md §3-4):
// refusals and what follows them, serving as soon as capacity frees, and the writes it makes.
import { describe, expect, it } from 'vitest';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { iosFullStatus, iosStatus } from '../test/cluster/fleet.js';
import { controllerStories, writesSettled } from '../test/cluster/controller.js';
import { iosCapacity } from '../test/fixtures/workers.js';
import { reasonsByWorker } from '../api/index.js';

const cluster = useCluster('ctl-refusals');
const { setup, metric } = controllerStories(cluster);

describe('refusals', () => {
  it.each([
    ['platform-running-limit', 'platform-running-limit'],
    ['global-running-limit', 'global-running-limit'],
    ['ram-budget', 'ram-budget'],
    ['device-not-present', 'device-not-present'],
    [undefined, undefined],
    ['bogus', undefined],
    [42, undefined],
  ])('NO_CAPACITY with capacity reason %j lists full with %j and waits', async (given, listed) => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.refuse('r1', {
      code: 'NO_CAPACITY',
      message: 'no room',
      ...(given !== undefined ? { capacityReason: given } : {}),
    });
    const request = await fleet.requestWhere(
      'r1',
      (r) => r.status?.phase === 'Waiting' && reasonsByWorker(r.status).length === 1,
    );
    expect(reasonsByWorker(request.status)).toEqual([
      { worker: a, reason: 'full', ...(listed ? { capacityReason: listed } : {}) },
    ]);
    await fleet.leaseGone('r1');
  });

  it('asks a refusing worker again as soon as its view changes, and grants', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.refuse('r1', { code: 'NO_CAPACITY', capacityReason: 'ram-budget' });
    await fleet.requestWhere(
      'r1',
      (r) => reasonsByWorker(r.status)[0]?.capacityReason === 'ram-budget',
    );
    await fleet.leaseGone('r1');
    await fleet.patchStatus('a', {
      queueDepth: 0,
      agentVersion: 'x',
      capacity: { global: { limit: 5, running: 0, evictable: 0 } },
    });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
  });

  it.each([
    ['UNKNOWN_MODEL', 'unknown-model'],
    ['RUNTIME_MISSING', 'runtime-missing'],
    ['NO_DRIVER', 'no-driver'],
    ['CAPABILITY_MISSING', 'capability-missing'],
  ])('%s from one worker lists %s for it while another may still serve', async (code, reason) => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    const b = await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.refuse('r1', { code, message: 'cannot' });
    const request = await fleet.requestWhere(
      'r1',
      (r) => r.status?.phase === 'Waiting' && reasonsByWorker(r.status)[0]?.reason === reason,
    );
    expect(reasonsByWorker(request.status)).toEqual([
      { worker: a, reason },
      { worker: b, reason: 'full', capacityReason: 'platform-running-limit' },
    ]);
  });

  it("fails with the worker's code when no other worker can serve", async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.refuse('r1', { code: 'UNKNOWN_MODEL', message: 'iPhone 16 is not installed here' });
    const request = await fleet.phase('r1', 'Failed');
    expect(request.status?.error).toMatchObject({
      code: 'UNKNOWN_MODEL',
      message: 'iPhone 16 is not installed here',
    });
  });

  it('marks a worker that does not answer within the dispatch timeout disconnected for the request', async () => {
    const { fleet, start } = await setup({ dispatchTimeoutMs: 500 });
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await eventually(() => fleet.lease('r1'));
    const request = await fleet.requestWhere(
      'r1',
      (r) => r.status?.phase === 'Waiting' && reasonsByWorker(r.status).length === 1,
    );
    expect(reasonsByWorker(request.status)).toEqual([{ worker: a, reason: 'disconnected' }]);
    await fleet.leaseGone('r1');
  });

  it('noWait: one more walk without the refusing worker, then NO_CAPACITY', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', noWait: true });
    await fleet.refuse('r1', { code: 'NO_CAPACITY', capacityReason: 'global-running-limit' });
    const request = await fleet.phase('r1', 'Failed');
    expect(request.status?.error?.code).toBe('NO_CAPACITY');
  });
});

describe('DESIGN.md §4.5: never refuse while capacity exists elsewhere, never hang, serve as soon as it frees', () => {
  it('grants ten requests on the two free workers while the third is full, and fails none', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosFullStatus() });
    // Room for five each, as the played agents' views say: each grant counts against its view
    // until the view shows it (the views here never change).
    const room = iosStatus({ capacity: iosCapacity({ limit: 5 }, { limit: 5 }) });
    const workers = [
      await fleet.addWorker('b', { status: room }),
      await fleet.addWorker('c', { status: room }),
    ];
    await start();
    const names = Array.from({ length: 10 }, (_, index) => `r${index}`);
    await Promise.all(names.map((name) => fleet.createRequest(name, { platform: 'ios' })));
    // Play agents with room for every request: grant whatever is dispatched to them.
    const granted = new Set<string>();
    await eventually(
      async () => {
        for (const name of names) {
          if (granted.has(name)) continue;
          const lease = await fleet.lease(name);
          if (lease && !lease.status) {
            expect(workers).toContain(lease.spec.worker);
            await fleet.grant(name, `sim-${name}`);
            granted.add(name);
          }
        }
        return granted.size === names.length ? true : undefined;
      },
      { timeoutMs: 30_000 },
    ).catch(async (error: unknown) => {
      // Say where each request stood, so that a failure here can be read.
      const states = await Promise.all(
        names.map(async (name) => {
          const request = await fleet.request(name);
          const lease = await fleet.lease(name);
          return `${name}: ${request?.status?.phase ?? '?'} ${JSON.stringify(reasonsByWorker(request?.status))} lease=${lease ? `${lease.spec.worker}/${lease.status?.phase ?? 'unanswered'}` : 'none'}${granted.has(name) ? ' (answered)' : ''}`;
        }),
      );
      throw new Error(`${String(error)}\n${states.join('\n')}`);
    });
    for (const name of names)
      expect((await fleet.phase(name, 'Granted')).status?.phase).toBe('Granted');
  });

  it('all full with noWait: NO_CAPACITY at once, not a hang', async () => {
    const { fleet, start } = await setup();
    for (const short of ['a', 'b', 'c']) await fleet.addWorker(short, { status: iosFullStatus() });
    await start();
    const started = Date.now();
    await fleet.createRequest('r1', { platform: 'ios', noWait: true });
    const request = await fleet.phase('r1', 'Failed');
    expect(request.status?.error?.code).toBe('NO_CAPACITY');
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('all full without noWait: waits, and is granted within a second of a slot freeing', async () => {
    const { fleet, start } = await setup();
    for (const short of ['a', 'b', 'c']) await fleet.addWorker(short, { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status).length === 3);
    const freed = Date.now();
    await fleet.setStatus('b', iosStatus());
    const lease = await eventually(() => fleet.lease('r1'), { intervalMs: 10 });
    expect(Date.now() - freed).toBeLessThan(1000);
    expect(lease.spec.worker).toBe(fleet.name('b'));
  });

  it('times out with TIMEOUT at its wait deadline', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', waitTimeoutSeconds: 2 });
    await fleet.phase('r1', 'Waiting');
    const request = await fleet.phase('r1', 'Failed', 10_000);
    expect(request.status?.error?.code).toBe('TIMEOUT');
  });
});

describe('write economy', () => {
  it('a walk that changes nothing writes nothing', async () => {
    const { fleet, start, metrics, reconciler } = await setup();
    await fleet.addWorker('a', { drained: true, status: iosStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status).length === 2);
    await writesSettled(reconciler);
    const writesBefore = await metric(metrics, 'simlock_api_writes_total');
    const walksBefore = await metric(metrics, 'simlock_walks_total');
    // A view change on the drained worker: a walk runs on it (nothing else starts one now), and
    // every reason stays what it was.
    await fleet.patchStatus('a', { capacity: { global: { limit: 8, running: 0, evictable: 0 } } });
    const a = fleet.name('a');
    await eventually(async () => {
      const seen = reconciler.snapshot().workers.find((view) => view.name === a);
      const walked = (await metric(metrics, 'simlock_walks_total')) > walksBefore;
      return walked && seen?.status?.capacity?.global.limit === 8 ? true : undefined;
    });
    await writesSettled(reconciler);
    expect(await metric(metrics, 'simlock_api_writes_total')).toBe(writesBefore);
  });
});

describe('reason writes under churn', () => {
  it('coalesces reason-only changes: a worker flapping eleven times makes a few writes, and the last state wins', async () => {
    const { fleet, metrics, start, reconciler } = await setup({ reasonWriteIntervalMs: 1000 });
    await fleet.addWorker('a', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status).length === 1);
    const before = await metric(metrics, 'simlock_status_writes_total');
    // Eleven changes of reason within a moment: drained, full, drained, …, drained.
    for (let flip = 0; flip < 11; flip++) await fleet.drain('a', flip % 2 === 0);
    const settled = await fleet.requestWhere(
      'r1',
      (r) => reasonsByWorker(r.status)[0]?.reason === 'drained',
      5000,
    );
    expect(reasonsByWorker(settled.status)).toEqual([
      { worker: fleet.name('a'), reason: 'drained' },
    ]);
    await writesSettled(reconciler);
    // At most one write per second of churn, never one per change.
    const writes = (await metric(metrics, 'simlock_status_writes_total')) - before;
    expect(writes).toBeGreaterThan(0);
    expect(writes).toBeLessThanOrEqual(3);
  });

  it("drops a removed worker's entry at the walk its removal runs", async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { drained: true, status: iosStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status).length === 2);
    await fleet.removeWorker('a');
    const request = await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status).length === 1);
    expect(reasonsByWorker(request.status)).toEqual([
      { worker: fleet.name('b'), reason: 'full', capacityReason: 'platform-running-limit' },
    ]);
  });
});

/** The dispatch is in the request's Events: on its own, or in the grant's that followed at once. */
