// Real agent processes with the fake driver against the real API server: registration, heartbeat,
// grants, refusals with each code, reclaim on delete, presence in the view, and a killed agent
// shown disconnected by its lapsed heartbeat.
import { afterEach, describe, expect, it } from 'vitest';
import { heartbeatLeaseName, reasonsByWorker } from '../api/index.js';
import type { Reconciler } from '../controller/index.js';
import { coordinationLeasePath, isNotFound, simlockPath } from '../runtime/index.js';
import { controllerFor, takingRequests } from '../test/cluster/controller.js';
import { startFleetAgent, iosSimulatorScript, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet, type LeaseView } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { aLease } from '../test/fixtures/objects.js';

const cluster = useCluster('agent');
const agents: AgentProcess[] = [];
const reconcilers: Reconciler[] = [];

afterEach(async () => {
  await Promise.all(reconcilers.splice(0).map((reconciler) => reconciler.stop()));
  await Promise.all(agents.splice(0).map((agent) => agent.kill('SIGKILL')));
});

async function fleetWithAgent(script = iosSimulatorScript(), config: Record<string, unknown> = {}) {
  const fleet = await TestFleet.create(cluster);
  const agent = await startFleetAgent(cluster, fleet, script, config);
  agents.push(agent);
  return { fleet, agent };
}

async function startController(fleet: TestFleet) {
  const reconciler = controllerFor(cluster, fleet);
  reconcilers.push(reconciler);
  await reconciler.start();
  await takingRequests(reconciler, fleet.name('a'));
}

/** Creates a Lease for the agent directly; `finalizers` as the controller puts them on. */
async function createLease(
  fleet: TestFleet,
  name: string,
  device: Record<string, unknown>,
  finalizers: string[] = [],
): Promise<void> {
  await fleet.admin.create(
    simlockPath('lease', { namespace: await fleet.makeLeaseNamespace('a') }),
    aLease(name)
      .forRequest(fleet.namespace, name)
      .label('simlock.dev/worker', fleet.name('a'))
      .finalizer(...finalizers)
      .worker(fleet.name('a'))
      .device(device)
      .expiresIn()
      .obj(),
  );
}

/** Creates a Lease for the agent directly (without the finalizer) and waits for its answer. */
async function dispatch(
  fleet: TestFleet,
  name: string,
  device: Record<string, unknown>,
): Promise<LeaseView> {
  await createLease(fleet, name, device);
  return eventually(async () => {
    const lease = await fleet.lease(name);
    return lease?.status && lease.status.phase !== 'Pending' ? lease : undefined;
  });
}

describe('an agent with the fake driver', () => {
  it('registers its Worker with its view and renews its heartbeat', async () => {
    const { fleet, agent } = await fleetWithAgent();
    const worker = (await fleet.admin.get(simlockPath('worker', { name: agent.name }))) as {
      metadata: { labels: Record<string, string> };
      spec: { label: string; drained: boolean };
    };
    expect(worker.spec).toEqual({ label: 'wrk_a', drained: false });
    expect(worker.metadata.labels['simlock.dev/fleet']).toBe(fleet.namespace);
    const status = await agent.status();
    expect(status).toMatchObject({
      protocol: 1,
      health: 'running',
      catalog: { platforms: ['ios'] },
    });
    expect(status?.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(status?.capacity?.platforms.ios).toMatchObject({ limit: 2 });

    const path = coordinationLeasePath(fleet.namespace, heartbeatLeaseName(agent.name));
    const renewTime = async (): Promise<string | undefined> => {
      try {
        return ((await fleet.admin.get(path)) as { spec: { renewTime: string } }).spec.renewTime;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    };
    // The heartbeat starts once the Worker is registered: its Lease may come a moment after.
    const first = await eventually(renewTime, { what: 'the first heartbeat' });
    await eventually(async () => {
      const next = await renewTime();
      return next !== undefined && next !== first ? next : undefined;
    });
  });

  it('grants a lease through the controller, holds it with a finalizer, and reclaims it on delete', async () => {
    const { fleet, agent } = await fleetWithAgent();
    await startController(fleet);
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const request = await fleet.phase('r1', 'Granted');
    expect(request.status?.device).toMatchObject({ model: 'iPhone 16', physical: false });
    const lease = await fleet.lease('r1');
    expect(lease?.metadata.finalizers).toContain('simlock.dev/reclaim');
    const deviceId = request.status?.device?.id;
    await eventually(async () =>
      (await agent.status())?.devices.find((device) => device.id === deviceId)?.state === 'leased'
        ? true
        : undefined,
    );

    await fleet.admin.delete(
      simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
    );
    await fleet.leaseGone('r1');
    await eventually(async () =>
      (await agent.status())?.devices.find((device) => device.id === deviceId)?.state === 'ready'
        ? true
        : undefined,
    );
  });

  it('gives the device back when its Lease is withdrawn while it boots one (one of grant and withdrawal wins)', async () => {
    const { fleet, agent } = await fleetWithAgent(iosSimulatorScript({ bootMs: 3000 }));
    // As the controller makes it: holding the agent's finalizer.
    await createLease(fleet, 'slow', { platform: 'ios', model: 'iPhone 16' }, [
      'simlock.dev/reclaim',
    ]);
    // The boot is under way (a device is booting, or the Lease acknowledged)...
    await eventually(
      async () =>
        (await agent.status())?.devices.some((device) => device.state !== 'ready')
          ? true
          : undefined,
      { what: 'a boot under way' },
    );
    // ...when the controller withdraws it: the finalizer off onto the Lease as seen (a conflict
    // if the agent's acknowledgement came between: then the agent lets it go), then delete.
    const seen = await fleet.lease('slow');
    await fleet.admin
      .patch(simlockPath('lease', { namespace: fleet.leaseNamespace('a'), name: 'slow' }), {
        metadata: {
          finalizers: [],
          annotations: { 'simlock.dev/withdrawn': 'true' },
          resourceVersion: seen?.metadata.resourceVersion,
        },
      })
      .catch(() => undefined);
    await fleet.admin.delete(
      simlockPath('lease', { namespace: fleet.leaseNamespace('a'), name: 'slow' }),
    );
    await fleet.leaseGone('slow');
    // The grant that came after could not land, and the device is not held for a Lease gone.
    await eventually(
      async () => {
        const status = await agent.status();
        return status?.devices.every((device) => device.state !== 'leased') &&
          (status.capacity?.global.running ?? 0) <= 1
          ? status
          : undefined;
      },
      { what: 'no device held', timeoutMs: 15_000 },
    );
    // And it still grants: the device was given back, not lost.
    const next = await dispatch(fleet, 'next', { platform: 'ios', model: 'iPhone 16' });
    expect(next.status?.phase).toBe('Granted');
  });

  it('grants a Lease it acknowledged with one status PUT onto the acknowledgement (ADR 0014)', async () => {
    const { fleet } = await fleetWithAgent(iosSimulatorScript({ bootMs: 4000 }));
    await createLease(fleet, 'cold', { platform: 'ios', model: 'iPhone 16' }, [
      'simlock.dev/reclaim',
    ]);
    // A cold boot takes longer than the acknowledgement's 2 s: Pending, with its message...
    await eventually(
      async () => ((await fleet.lease('cold'))?.status?.phase === 'Pending' ? true : undefined),
      { what: 'the acknowledgement' },
    );
    // ...then the grant, written over the acknowledgement's version: its message gone, and the
    // rest of the Lease as the controller made it (a status PUT changes only the status).
    const lease = await eventually(
      async () => {
        const current = await fleet.lease('cold');
        return current?.status?.phase === 'Granted' ? current : undefined;
      },
      { what: 'the grant', timeoutMs: 15_000 },
    );
    const status = lease.status as Record<string, unknown>;
    expect(status).toMatchObject({ phase: 'Granted', source: 'cold' });
    expect(status.device).toMatchObject({ model: 'iPhone 16', physical: false });
    expect(typeof status.grantedAt).toBe('string');
    expect(status).not.toHaveProperty('message');
    expect(lease.spec).toMatchObject({ worker: fleet.name('a'), device: { model: 'iPhone 16' } });
    expect(lease.metadata.finalizers).toEqual(['simlock.dev/reclaim']);
    expect(lease.metadata.labels?.['simlock.dev/worker']).toBe(fleet.name('a'));
  });

  it('writes its view onto a Worker an operator drained meanwhile: a 409, read again (ADR 0014)', async () => {
    const { fleet, agent } = await fleetWithAgent();
    await eventually(async () => ((await agent.status())?.health === 'running' ? true : undefined));
    const conflictsBefore = await workerStatusConflicts();
    // The drain changes the Worker's version: the agent's next view write is onto an older one.
    await fleet.drain('a');
    const lease = await dispatch(fleet, 'after-drain', { platform: 'ios', model: 'iPhone 16' });
    expect(lease.status?.phase).toBe('Granted');
    const leased = await eventually(
      async () => {
        const status = await agent.status();
        return status?.devices.some((device) => device.state === 'leased') ? status : undefined;
      },
      { what: 'the grant in the view' },
    );
    expect(leased.health).toBe('running');
    expect(await workerStatusConflicts()).toBeGreaterThan(conflictsBefore);
    const worker = (await fleet.admin.get(simlockPath('worker', { name: agent.name }))) as {
      spec: { drained: boolean };
    };
    expect(worker.spec.drained).toBe(true);
  });

  it('lets go of Leases deleted at any moment of their grant, and holds no device for them', async () => {
    const { fleet, agent } = await fleetWithAgent(iosSimulatorScript({ bootMs: 0 }));
    const names = Array.from({ length: 12 }, (_, index) => `quick-${index}`);
    // Each Lease deleted a little later than the one before: before, during and after its grant.
    await Promise.all(
      names.map(async (name, index) => {
        await createLease(fleet, name, { platform: 'ios', model: 'iPhone 16' }, [
          'simlock.dev/reclaim',
        ]);
        await new Promise((resolve) => setTimeout(resolve, index * 5));
        await fleet.admin.delete(
          simlockPath('lease', { namespace: fleet.leaseNamespace('a'), name }),
        );
      }),
    );
    for (const name of names) await fleet.leaseGone(name);
    await eventually(
      async () =>
        (await agent.status())?.devices.every((device) => device.state !== 'leased')
          ? true
          : undefined,
      { what: 'no device held' },
    );
    const next = await dispatch(fleet, 'after', { platform: 'ios', model: 'iPhone 16' });
    expect(next.status?.phase).toBe('Granted');
  });

  it.each([
    ['UNKNOWN_MODEL', { platform: 'ios', model: 'iPhone 3G' }],
    ['NO_DRIVER', { platform: 'android' }],
    ['RUNTIME_MISSING', { platform: 'ios', os: '16.0' }],
    ['CAPABILITY_MISSING', { platform: 'ios', requires: ['camera'] }],
    ['UNKNOWN_MODEL', { platform: 'ios', physical: true }],
  ])('refuses with %s a lease it can never serve (%j)', async (code, device) => {
    const { fleet } = await fleetWithAgent();
    const lease = (await dispatch(fleet, 'l1', device)) as LeaseView & {
      status: { phase: string; refusal?: { code: string } };
    };
    expect(lease.status).toMatchObject({ phase: 'Refused', refusal: { code } });
  });

  it('refuses NO_CAPACITY with platform-running-limit when its iOS slots are taken', async () => {
    const { fleet } = await fleetWithAgent(iosSimulatorScript(), {
      limits: { running: 4, platforms: { ios: { running: 1 } } },
    });
    expect((await dispatch(fleet, 'l1', { platform: 'ios' })).status?.phase).toBe('Granted');
    const refused = (await dispatch(fleet, 'l2', { platform: 'ios' })) as LeaseView & {
      status: { refusal?: unknown };
    };
    expect(refused.status).toMatchObject({
      phase: 'Refused',
      refusal: { code: 'NO_CAPACITY', capacityReason: 'platform-running-limit' },
    });
  });

  it('never gives one device to two leases arriving together', async () => {
    const { fleet } = await fleetWithAgent(iosSimulatorScript(), {
      limits: { running: 8, platforms: { ios: { running: 8 } } },
    });
    const names = ['l1', 'l2', 'l3', 'l4'];
    const leases = await Promise.all(
      names.map((name) => dispatch(fleet, name, { platform: 'ios', model: 'iPhone 16' })),
    );
    const granted = leases.filter((lease) => lease.status?.phase === 'Granted') as (LeaseView & {
      status: { device: { id: string } };
    })[];
    const ids = granted.map((lease) => lease.status.device.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(granted.length).toBeGreaterThanOrEqual(2);
  });

  it("puts a physical device's presence in the view within a probe interval of a change", async () => {
    const phone = {
      id: '00008110-001A2B3C4D5E',
      name: 'iPhone',
      model: 'iPhone 15 Pro',
      platform: 'ios',
      os: '18.4',
      physical: true,
    };
    const script = iosSimulatorScript({ devices: [phone] });
    const { agent } = await fleetWithAgent(script);
    await eventually(async () =>
      (await agent.status())?.devices[0]?.presence?.present === true ? true : undefined,
    );
    await agent.setScript({
      ...script,
      devices: [{ ...phone, presence: { present: false, reason: 'locked' } }],
    });
    const unplugged = await eventually(
      async () => {
        const presence = (await agent.status())?.devices[0]?.presence;
        return presence?.present === false ? presence : undefined;
      },
      { timeoutMs: 5000 },
    );
    expect(unplugged).toEqual({ present: false, reason: 'locked' });
  });

  it('keeps a granted lease across its own restart, the device still held, and reclaims it on delete afterwards', async () => {
    const { fleet, agent } = await fleetWithAgent(iosSimulatorScript(), {
      limits: { running: 8, platforms: { ios: { running: 8 } } },
    });
    const granted = (await dispatch(fleet, 'kept', {
      platform: 'ios',
      model: 'iPhone 16',
    })) as LeaseView & {
      status: { phase: string; device: { id: string } };
    };
    expect(granted.status.phase).toBe('Granted');
    await agent.restart('SIGKILL');
    // A new lease for the same model must not get the held device.
    const other = (await dispatch(fleet, 'other', {
      platform: 'ios',
      model: 'iPhone 16',
    })) as LeaseView & {
      status: { phase: string; device?: { id: string } };
    };
    expect(other.status.device?.id).not.toBe(granted.status.device.id);
    expect((await fleet.lease('kept'))?.status?.phase).toBe('Granted');
    await eventually(async () =>
      (await agent.status())?.devices.find((device) => device.id === granted.status.device.id)
        ?.state === 'leased'
        ? true
        : undefined,
    );

    await fleet.admin.delete(
      simlockPath('lease', { namespace: fleet.leaseNamespace('a'), name: 'kept' }),
    );
    await fleet.leaseGone('kept');
  });

  it('is shown disconnected once it is killed and its heartbeat lapses', async () => {
    const { fleet, agent } = await fleetWithAgent();
    await startController(fleet);
    await fleet.addWorker('z', {
      status: {
        ...(await agent.status())!,
        capacity: { global: { limit: 0, running: 0, evictable: 0 }, platforms: {} },
      },
    });
    await agent.kill('SIGKILL');
    const killedAt = Date.now();
    await fleet.createRequest('r1', { platform: 'ios' });
    const request = await fleet.requestWhere(
      'r1',
      (r) => reasonsByWorker(r.status)[0]?.reason === 'disconnected',
      15_000,
    );
    expect(reasonsByWorker(request.status)[0]).toEqual({
      worker: agent.name,
      reason: 'disconnected',
    });
    // The heartbeat lasts 5 s.
    expect(Date.now() - killedAt).toBeLessThan(8000);
  });
});

/** Status PUTs of Workers the API server answered 409, as it counts them (every agent's). */
async function workerStatusConflicts(): Promise<number> {
  const text = String(await cluster.admin.get('/metrics'));
  return text
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('apiserver_request_total{') &&
        line.includes('code="409"') &&
        line.includes('resource="workers"') &&
        line.includes('subresource="status"') &&
        line.includes('verb="PUT"'),
    )
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf('}') + 1)), 0);
}
