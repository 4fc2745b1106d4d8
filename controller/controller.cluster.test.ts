// The controller against the real API server, with the test playing the agents (DESIGN.md §3-4).
import { afterEach, describe, expect, it } from 'vitest';
import { simlockPath } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { TestFleet, iosFullStatus, iosStatus, physicalIphone } from '../test/cluster/fleet.js';
import { controllerFor } from '../test/cluster/controller.js';
import { ControllerMetrics, type Reconciler } from './index.js';

const cluster = useCluster('ctl');
const running: Reconciler[] = [];
const fleets: TestFleet[] = [];

async function setup(
  options: {
    dispatchTimeoutMs?: number;
    reasonWriteIntervalMs?: number;
    dispatchEventHoldMs?: number;
  } = {},
) {
  const fleet = await TestFleet.create(cluster);
  fleets.push(fleet);
  const metrics = new ControllerMetrics();
  const reconciler = controllerFor(cluster, fleet, { metrics, ...options });
  running.push(reconciler);
  return { fleet, reconciler, metrics, start: () => reconciler.start() };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((reconciler) => reconciler.stop()));
  await Promise.all(fleets.splice(0).map((fleet) => fleet.cleanup()));
});

async function metric(metrics: ControllerMetrics, name: string): Promise<number> {
  const values = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.reduce((sum, value) => sum + value.value, 0);
}

describe('admission: the fleet table', () => {
  it('fails at once with NO_CAPACITY no-worker when no worker takes requests', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus(), drained: true });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    const request = await fleet.phase('r1', 'Failed');
    expect(request.status?.error).toMatchObject({
      code: 'NO_CAPACITY',
      details: { reason: 'no-worker' },
    });
    expect(request.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Failed', status: 'True', reason: 'NoCapacity' }),
    );
  });

  it.each([
    ['NO_DRIVER', { platform: 'android' }],
    ['UNKNOWN_MODEL', { platform: 'ios', model: 'iPhone 3G' }],
    ['RUNTIME_MISSING', { platform: 'ios', os: '16.0' }],
    ['CAPABILITY_MISSING', { platform: 'ios', requires: ['camera'] }],
    ['UNKNOWN_MODEL', { platform: 'ios', physical: true, class: 'tablet' }],
  ])('fails at once with %s when no known worker could serve %j', async (code, spec) => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus({ devices: [physicalIphone()] }) });
    await start();
    await fleet.createRequest('r1', spec);
    const request = await fleet.phase('r1', 'Failed');
    expect(request.status?.error?.code).toBe(code);
  });

  it('gives a physical UNKNOWN_MODEL the message that names the range form', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('b', { status: iosStatus({ devices: [physicalIphone()] }) });
    await start();
    await fleet.createRequest('r1', {
      platform: 'ios',
      physical: true,
      model: 'iPhone 15 Pro',
      os: '18',
    });
    const request = await fleet.phase('r1', 'Failed');
    expect(request.status?.error).toMatchObject({
      code: 'UNKNOWN_MODEL',
      details: { platform: 'ios', model: 'iPhone 15 Pro', osVersion: '18' },
    });
    expect(request.status?.error?.message).toContain('--os ">=18 <19"');
  });
});

describe('a waiting request lists one reason per known worker', () => {
  it('shows drained and full: running limit for iOS for two workers (DESIGN.md §3.2)', async () => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { label: 'wrk_a', drained: true, status: iosStatus() });
    const b = await fleet.addWorker('b', { label: 'wrk_b', status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const request = await fleet.requestWhere(
      'r1',
      (r) => r.status?.phase === 'Waiting' && (r.status.workers?.length ?? 0) === 2,
    );
    expect(request.status?.workers).toEqual([
      { worker: a, reason: 'drained' },
      { worker: b, reason: 'full', capacityReason: 'platform-running-limit' },
    ]);
    expect(request.status?.summary).toBe('2 workers: 1 drained, 1 full');
    expect(request.status?.position).toBe(1);

    const listed = await cluster.kubectl(['get', 'leaserequests', '-n', fleet.namespace]);
    expect(listed.stdout).toMatch(/r1\s+Waiting\s+ios\s+iPhone 16\s+2 workers: 1 drained, 1 full/);
    const yaml = await cluster.kubectl(['get', 'lr', 'r1', '-n', fleet.namespace, '-o', 'yaml']);
    expect(yaml.stdout).toContain('capacityReason: platform-running-limit');
  });

  it('lists every known worker: a disconnected one, an incompatible one, one without a view', async () => {
    const { fleet, start } = await setup();
    const gone = await fleet.addWorker('a', { status: iosStatus(), heartbeat: false });
    const old = await fleet.addWorker('b', { status: iosStatus({ protocol: 99 }) });
    const fresh = await fleet.addWorker('c');
    const full = await fleet.addWorker('d', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    const request = await fleet.requestWhere('r1', (r) => (r.status?.workers?.length ?? 0) === 4);
    expect(request.status?.workers).toEqual([
      { worker: gone, reason: 'disconnected' },
      { worker: old, reason: 'incompatible' },
      { worker: fresh, reason: 'not-ready' },
      { worker: full, reason: 'full', capacityReason: 'platform-running-limit' },
    ]);
  });

  it('follows the latest view: drained, then undrained and full at the RAM budget', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { drained: true, status: iosStatus() });
    await fleet.addWorker('z', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => r.status?.workers?.[0]?.reason === 'drained');
    await fleet.setStatus('a', iosFullStatus());
    await fleet.drain('a', false);
    const request = await fleet.requestWhere(
      'r1',
      (r) => r.status?.workers?.[0]?.reason === 'full',
    );
    expect(request.status?.workers?.[0]?.capacityReason).toBe('platform-running-limit');
  });
});

describe('dispatch and grant', () => {
  it('creates a Lease named as the request, labelled and owned, and grants it on the answer', async () => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16', durationSeconds: 600 });
    const lease = await fleet.grant('r1', 'sim-42');
    expect(lease.spec).toMatchObject({
      worker: a,
      device: { platform: 'ios', model: 'iPhone 16' },
    });
    expect(lease.metadata.labels?.['simlock.dev/worker']).toBe(a);
    // Made holding the agent's finalizer, so that the agent's grant is one status write.
    expect(lease.metadata.finalizers).toEqual(['simlock.dev/reclaim']);
    expect(lease.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'LeaseRequest', name: 'r1' });
    expect(Date.parse(lease.spec.expiresAt) - Date.now()).toBeGreaterThan(590_000);

    const request = await fleet.phase('r1', 'Granted');
    expect(request.status).toMatchObject({ worker: a, lease: 'r1', device: { id: 'sim-42' } });
    expect(request.status?.workers).toBeUndefined();
    expect(request.metadata.finalizers).toContain('simlock.dev/release');
    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.some((event) => event.startsWith('Granted: ')) ? list : undefined;
    });
    // A grant that comes within a second of its dispatch records both in one Event (ADR 0005).
    expect(dispatchRecorded(events, `${a} (free-capacity)`), events.join('\n')).toBe(true);
    expect(
      events.some((event) => event.startsWith('Granted: Granted iPhone 16 sim-42 on wrk_a')),
    ).toBe(true);
  });

  it('flags a physical dispatch in its event and sends it to the worker with the enrolled device', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    const b = await fleet.addWorker('b', {
      status: iosFullStatus({ devices: [physicalIphone()] }),
    });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', physical: true });
    const lease = await eventually(() => fleet.lease('r1'));
    expect(lease.spec.worker).toBe(b);
    const events = await eventually(async () =>
      (await fleet.events('r1')).length > 0 ? fleet.events('r1') : undefined,
    );
    expect(dispatchRecorded(events, `${b} (warm-hit, physical)`), events.join('\n')).toBe(true);
  });

  it('records a grant that follows its dispatch within the hold as one Event naming the dispatch (ADR 0005)', async () => {
    const { fleet, start } = await setup({ dispatchEventHoldMs: 60_000 });
    const a = await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('r1', 'sim-7');
    await fleet.phase('r1', 'Granted');
    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.length > 0 ? list : undefined;
    });
    expect(events).toEqual([
      `Granted: Granted iPhone 16 sim-7 on wrk_a; dispatched to ${a} (free-capacity)`,
    ]);
  });

  it('with --dispatch-event-hold-ms 0, records every dispatch as its own Event at once', async () => {
    const { fleet, start } = await setup({ dispatchEventHoldMs: 0 });
    const a = await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('r1', 'sim-9');
    await fleet.phase('r1', 'Granted');
    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.length >= 2 ? list : undefined;
    });
    expect([...events].sort()).toEqual([
      `Dispatched: Dispatched to ${a} (free-capacity)`,
      'Granted: Granted iPhone 16 sim-9 on wrk_a',
    ]);
  });

  it('records a dispatch that came to nothing as an Event of its own, and the next with its grant', async () => {
    const { fleet, start } = await setup({ dispatchEventHoldMs: 60_000 });
    const a = await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.refuse('r1', { code: 'NO_CAPACITY', capacityReason: 'ram-budget' });
    await fleet.leaseGone('r1');
    // A new view: the refusal memo lapses and the worker is asked again.
    await fleet.patchStatus('a', {
      queueDepth: 0,
      agentVersion: 'x',
      capacity: { global: { limit: 5, running: 0, evictable: 0 } },
    });
    await fleet.grant('r1', 'sim-8');
    await fleet.phase('r1', 'Granted');
    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.length >= 2 ? list : undefined;
    });
    expect(events).toHaveLength(2);
    expect(events).toContain(`Dispatched: Dispatched to ${a} (free-capacity)`);
    expect(
      events.some((event) =>
        new RegExp(`^Granted: Granted iPhone 16 sim-8 on wrk_a; dispatched to ${a} \\(`).test(
          event,
        ),
      ),
      events.join('\n'),
    ).toBe(true);
  });

  it("lets a removed worker's Lease go, so that its request can still be released", async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    // Granted by a worker that is then removed for good: no agent will take its finalizer off.
    await fleet.grant('r1', 'sim-1', { reclaims: false });
    await fleet.phase('r1', 'Granted');
    await fleet.removeWorker('a');
    await fleet.admin.delete(
      simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
    );
    await fleet.leaseGone('r1');
    await fleet.requestGone('r1');
  });

  it('releases on delete: the Lease goes first, then the request', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    await fleet.admin.delete(
      `/apis/simlock.dev/v1alpha1/namespaces/${fleet.namespace}/leaserequests/r1`,
    );
    await fleet.leaseGone('r1');
    await fleet.requestGone('r1');
  });
});

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
      (r) => r.status?.phase === 'Waiting' && r.status.workers?.length === 1,
    );
    expect(request.status?.workers).toEqual([
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
    await fleet.requestWhere('r1', (r) => r.status?.workers?.[0]?.capacityReason === 'ram-budget');
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
      (r) => r.status?.phase === 'Waiting' && r.status.workers?.[0]?.reason === reason,
    );
    expect(request.status?.workers).toEqual([
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
      (r) => r.status?.phase === 'Waiting' && r.status.workers?.length === 1,
    );
    expect(request.status?.workers).toEqual([{ worker: a, reason: 'disconnected' }]);
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
    const workers = [
      await fleet.addWorker('b', { status: iosStatus() }),
      await fleet.addWorker('c', { status: iosStatus() }),
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
          return `${name}: ${request?.status?.phase ?? '?'} lease=${lease ? `${lease.spec.worker}/${lease.status?.phase ?? 'unanswered'}` : 'none'}${granted.has(name) ? ' (answered)' : ''}`;
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
    await fleet.requestWhere('r1', (r) => r.status?.workers?.length === 3);
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
    const { fleet, start, metrics } = await setup();
    await fleet.addWorker('a', { drained: true, status: iosStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => r.status?.workers?.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const writesBefore = await metric(metrics, 'simlock_api_writes_total');
    const walksBefore = await metric(metrics, 'simlock_walks_total');
    // A view change on the drained worker: a walk runs, and every reason stays what it was.
    await fleet.patchStatus('a', { capacity: { global: { limit: 8, running: 0, evictable: 0 } } });
    await eventually(async () =>
      (await metric(metrics, 'simlock_walks_total')) > walksBefore ? true : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await metric(metrics, 'simlock_api_writes_total')).toBe(writesBefore);
  });
});

describe('reason writes under churn', () => {
  it('coalesces reason-only changes: a worker flapping eleven times makes a few writes, and the last state wins', async () => {
    const { fleet, metrics, start } = await setup({ reasonWriteIntervalMs: 1000 });
    await fleet.addWorker('a', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere('r1', (r) => r.status?.workers?.length === 1);
    const before = await metric(metrics, 'simlock_status_writes_total');
    // Eleven changes of reason within a moment: drained, full, drained, …, drained.
    for (let flip = 0; flip < 11; flip++) await fleet.drain('a', flip % 2 === 0);
    const settled = await fleet.requestWhere(
      'r1',
      (r) => r.status?.workers?.[0]?.reason === 'drained',
      5000,
    );
    expect(settled.status?.workers).toEqual([{ worker: fleet.name('a'), reason: 'drained' }]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
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
    await fleet.requestWhere('r1', (r) => r.status?.workers?.length === 2);
    await fleet.removeWorker('a');
    const request = await fleet.requestWhere('r1', (r) => r.status?.workers?.length === 1);
    expect(request.status?.workers).toEqual([
      { worker: fleet.name('b'), reason: 'full', capacityReason: 'platform-running-limit' },
    ]);
  });
});

/** The dispatch is in the request's Events: on its own, or in the grant's that followed at once. */
function dispatchRecorded(events: readonly string[], dispatchedTo: string): boolean {
  return events.some(
    (event) =>
      event === `Dispatched: Dispatched to ${dispatchedTo}` ||
      (event.startsWith('Granted: ') && event.endsWith(`; dispatched to ${dispatchedTo}`)),
  );
}
