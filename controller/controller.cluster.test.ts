// The controller against the real API server, with the test playing the agents (DESIGN.md §3-4):
// admission, the reasons of a waiting request, dispatch and grant. Refusals, serving while capacity
// exists and write economy are in controller-refusals.cluster.test.ts.
import { describe, expect, it } from 'vitest';
import { KubeClient, isNotFound, simlockPath } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { iosFullStatus, iosStatus, physicalIphone } from '../test/cluster/fleet.js';
import { controllerFor, controllerStories, writesSettled } from '../test/cluster/controller.js';
import { iosCapacity } from '../test/fixtures/workers.js';
import { leaseNamespaceOf, reasonsByWorker } from '../api/index.js';

const cluster = useCluster('ctl');
const { setup, metric } = controllerStories(cluster);

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
      (r) => r.status?.phase === 'Waiting' && reasonsByWorker(r.status).length === 2,
    );
    expect(reasonsByWorker(request.status)).toEqual([
      { worker: a, reason: 'drained' },
      { worker: b, reason: 'full', capacityReason: 'platform-running-limit' },
    ]);
    expect(request.status?.summary).toBe('2 workers: 1 drained, 1 full');
    expect(request.status?.position).toBe(1);
    // Stored grouped by reason, each reason with the workers that have it (ADR 0033).
    expect(request.status?.workers).toEqual([
      { reason: 'drained', names: [a] },
      { reason: 'full', capacityReason: 'platform-running-limit', names: [b] },
    ]);

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
    const request = await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status).length === 4);
    expect(reasonsByWorker(request.status)).toEqual([
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
    await fleet.requestWhere('r1', (r) => reasonsByWorker(r.status)[0]?.reason === 'drained');
    await fleet.setStatus('a', iosFullStatus());
    await fleet.drain('a', false);
    const request = await fleet.requestWhere(
      'r1',
      (r) => reasonsByWorker(r.status)[0]?.reason === 'full',
    );
    expect(reasonsByWorker(request.status)[0]?.capacityReason).toBe('platform-running-limit');
  });
});

describe('dispatch and grant', () => {
  it("creates a Lease in its worker's namespace, named by the request's UID and naming the request, and grants it on the answer", async () => {
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
    const uid = (await fleet.request('r1')).metadata.uid;
    expect(lease.metadata).toMatchObject({ namespace: leaseNamespaceOf(a), name: uid });
    expect(lease.spec.request).toEqual({ namespace: fleet.namespace, name: 'r1', uid });
    expect(Date.parse(lease.spec.expiresAt) - Date.now()).toBeGreaterThan(590_000);

    const request = await fleet.phase('r1', 'Granted');
    expect(request.status).toMatchObject({
      worker: a,
      lease: uid,
      leaseNamespace: leaseNamespaceOf(a),
      durationSeconds: 600,
      device: { id: 'sim-42' },
    });
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

  it('writes a quick grant as one status write, its expiry in it', async () => {
    const { fleet, start, metrics, reconciler } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', durationSeconds: 600 });
    await fleet.grant('r1', 'sim-3');
    await fleet.requestWhere(
      'r1',
      (request) => (request.status as { expiresAt?: string } | undefined)?.expiresAt !== undefined,
    );
    await writesSettled(reconciler);
    expect(await metric(metrics, 'simlock_status_writes_total')).toBe(1);
  });

  it('flags a physical dispatch in its event and sends it to the worker with the enrolled device', async () => {
    // Recorded at once: with no answer from the (played) agent it is otherwise held 10 s.
    const { fleet, start } = await setup({ dispatchEventHoldMs: 0 });
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

  it('writes a granted lease ExpiringSoon when it comes, not when the dispatch hold would have ended', async () => {
    // A hold of 60 s, over once the agent grants: the warning 8 s before a 10 s lease's expiry is
    // written 2 s after the grant (it was held to the hold's end, past the expiry).
    const { fleet, start } = await setup({ dispatchEventHoldMs: 60_000, expiringSoonMs: 8_000 });
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', durationSeconds: 10 });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    const warned = await fleet.requestWhere(
      'r1',
      (r) =>
        (r.status?.conditions as { type: string; status: string }[] | undefined)?.some(
          (c) => c.type === 'ExpiringSoon' && c.status === 'True',
        ) === true,
      7_000,
    );
    expect(warned.status?.phase).toBe('Granted');
  });

  it('by default holds the dispatch, its Event and its status, until its agent answers: a cold boot tells it as the agent acknowledges, the grant on its own (ADR 0016, 0030)', async () => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const created = await eventually(() => fleet.lease('r1'));
    // An agent slow to answer (2 s, past the old one-second hold): nothing is told yet, neither
    // in the Events nor in the status.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await fleet.events('r1')).toEqual([]);
    expect((await fleet.request('r1')).status?.phase).not.toBe('Dispatched');
    await fleet.answer('r1', { phase: 'Pending', message: 'accepted: booting the device' });
    const dispatched = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.length > 0 ? list : undefined;
    });
    expect(dispatched).toEqual([`Dispatched: Dispatched to ${a} (free-capacity)`]);
    expect((await fleet.phase('r1', 'Dispatched')).status?.worker).toBe(a);
    // Dated when the dispatch was made, not when it was told (2 s later).
    const [event] = await fleet.eventTimes('r1');
    expect(Date.parse(event?.firstTimestamp ?? '')).toBeLessThanOrEqual(
      Date.parse(created.metadata.creationTimestamp ?? '') + 1000,
    );
    await fleet.grant('r1', 'sim-6');
    await fleet.phase('r1', 'Granted');
    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.length >= 2 ? list : undefined;
    });
    expect([...events].sort()).toEqual([
      `Dispatched: Dispatched to ${a} (free-capacity)`,
      'Granted: Granted iPhone 16 sim-6 on wrk_a',
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

  it("makes a worker's Lease namespace when it first sees the Worker, owned by it, and lets it go with the Worker", async () => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await start();
    // Made off the grant's path, before any dispatch (ADR 0034).
    const path = `/api/v1/namespaces/${leaseNamespaceOf(a)}`;
    const namespace = (await eventually(() => fleet.admin.get(path).catch(() => undefined), {
      what: "the worker's Lease namespace",
    })) as { metadata: { labels?: Record<string, string>; ownerReferences?: unknown[] } };
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.grant('r1', 'sim-1', { reclaims: false });
    await fleet.phase('r1', 'Granted');
    const worker = (await fleet.admin.get(simlockPath('worker', { name: a }))) as {
      metadata: { uid: string };
    };
    expect(namespace.metadata.labels?.['simlock.dev/worker']).toBe(a);
    expect(namespace.metadata.ownerReferences).toEqual([
      { apiVersion: 'simlock.dev/v1alpha1', kind: 'Worker', name: a, uid: worker.metadata.uid },
    ]);
    // The Worker removed for good: its namespace goes (the garbage collector, then the namespace
    // controller), the Lease in it let go by the controller (no agent is left to), and the request
    // ends as a lease lost.
    await fleet.removeWorker('a');
    await fleet.leaseGone('r1');
    await fleet.requestWhere('r1', (request) => request.status?.phase === 'Released');
    await eventually(
      () =>
        fleet.admin.get(path).then(
          () => undefined,
          (error: unknown) => (isNotFound(error) ? true : undefined),
        ),
      { what: "the worker's Lease namespace gone", timeoutMs: 60_000 },
    );
  });

  it('does not make again, at its start, the Lease namespaces there already (one list, no create)', async () => {
    const { fleet, start, reconciler } = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    const b = await fleet.addWorker('b', { status: iosStatus() });
    await start();
    for (const worker of [a, b])
      await eventually(
        () =>
          fleet.admin.get(`/api/v1/namespaces/${leaseNamespaceOf(worker)}`).catch(() => undefined),
        { what: `${worker}'s Lease namespace` },
      );
    await reconciler.stop();

    // The next controller (a restart, a new leader), its namespace creates counted.
    const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
    const create = client.create.bind(client);
    const namespaceCreates: string[] = [];
    client.create = (path, body, ...rest) => {
      if (path === '/api/v1/namespaces')
        namespaceCreates.push((body as { metadata: { name: string } }).metadata.name);
      return create(path, body, ...rest);
    };
    const next = controllerFor(cluster, fleet, { client });
    try {
      await next.start();
      // Synced: every Worker seen. A third worker, new, still gets its namespace at first sight.
      const c = await fleet.addWorker('c', { status: iosStatus() });
      await eventually(() => (namespaceCreates.length > 0 ? true : undefined), {
        what: "the new worker's namespace made",
      });
      expect(namespaceCreates).toEqual([leaseNamespaceOf(c)]);
    } finally {
      await next.stop();
    }
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

describe('grant Events at volume (ADR 0028)', () => {
  it('past the budget tells a plain grant by its status alone, and the next grant Event counts it', async () => {
    // 0.2 a second: a burst of 2, then a token every 5 s. Four grants one after another come well
    // within it on a loaded machine (seven within the 2 s of 0.5 a second once did not: a token
    // came back and the sixth grant had its Event).
    const { fleet, start, metrics } = await setup({ grantEventsPerSecond: 0.2 });
    await fleet.addWorker('a', {
      label: 'wrk_a',
      status: iosStatus({ capacity: iosCapacity({ limit: 8 }, { limit: 8 }) }),
    });
    await start();
    const names = ['r1', 'r2', 'r3', 'r4'];
    for (const name of names) {
      await fleet.createRequest(name, { platform: 'ios', model: 'iPhone 16' });
      await fleet.grant(name, `sim-${name}`);
      await fleet.phase(name, 'Granted');
    }
    const granted = async (name: string) =>
      (await fleet.events(name)).filter((event) => event.startsWith('Granted: '));
    await eventually(async () =>
      (await Promise.all(names.slice(0, 2).map(granted))).every((list) => list.length === 1)
        ? true
        : undefined,
    );
    await eventually(async () =>
      (await metric(metrics, 'simlock_grant_events_left_out_total')) === 2 ? true : undefined,
    );
    // r3 and r4 have no Event; `kubectl describe` tells each grant by its Granted condition.
    expect([...(await granted('r3')), ...(await granted('r4'))]).toEqual([]);
    const described = await cluster.kubectl(['describe', 'lr', 'r4', '-n', fleet.namespace]);
    expect(described.stdout).toMatch(/Message:\s+iPhone 16 sim-r4 on wrk_a/);
    expect(described.stdout).toMatch(/Type:\s+Granted/);

    // A token back (5 s): the next grant is an Event again, and says what was left out before it.
    await new Promise((resolve) => setTimeout(resolve, 5100));
    await fleet.createRequest('r5', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('r5', 'sim-r5');
    const [event] = await eventually(async () => {
      const list = await granted('r5');
      return list.length > 0 ? list : undefined;
    });
    expect(event).toMatch(
      /^Granted: Granted iPhone 16 sim-r5 on wrk_a; dispatched to .* \(2 grants in this namespace since \S+ have no Event of their own: at volume a grant is told by its request's status\)$/,
    );
  });
});

function dispatchRecorded(events: readonly string[], dispatchedTo: string): boolean {
  return events.some(
    (event) =>
      event === `Dispatched: Dispatched to ${dispatchedTo}` ||
      (event.startsWith('Granted: ') && event.endsWith(`; dispatched to ${dispatchedTo}`)),
  );
}
