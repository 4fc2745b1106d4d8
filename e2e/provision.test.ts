// A grant that makes its device: a real agent process (fake driver that can make an iPhone 17 it
// has no device of, slowly) answers a Lease by making the device, then booting it, and says each
// step on the Lease as it begins, with its estimate; the grant then clears the progress.
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseObject, LeaseRequestObject, type GrantProgress } from '../api/index.js';
import { deriveLimits, readMachine } from '../agent/index.js';
import type { Reconciler } from '../controller/index.js';
import { controllerFor, takingRequests } from '../test/cluster/controller.js';
import { Informer, KubeClient, simlockPath } from '../runtime/index.js';
import { startFleetAgent, iosSimulatorScript, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { makeLeaseNamespace } from '../test/cluster/leases.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { aLease } from '../test/fixtures/objects.js';

const cluster = useCluster('provision');
const agents: AgentProcess[] = [];
const informers: Informer[] = [];
const reconcilers: Reconciler[] = [];
afterEach(async () => {
  await Promise.all(reconcilers.splice(0).map((reconciler) => reconciler.stop()));
  await Promise.all(informers.splice(0).map((informer) => informer.stop()));
  await Promise.all(agents.splice(0).map((agent) => agent.kill('SIGKILL')));
});

// Both steps take longer than the agent's acknowledgement delay (2 s), so both are written.
const PROVISION_MS = 2500;
const BOOT_MS = 2500;

const makesIphone17 = () =>
  iosSimulatorScript({
    makeable: [{ platform: 'ios', model: 'iPhone 17', os: ['18.4', '26.0'] }],
    runtimes: [
      { platform: 'ios', version: '18.4' },
      { platform: 'ios', version: '26.0' },
    ],
    provisionMs: PROVISION_MS,
    bootMs: BOOT_MS,
  });

/** Every status a watch delivers of the namespace's objects at `path`, in order. */
async function watchStatuses<T>(
  path: string,
  parse: (object: unknown) => T | undefined,
): Promise<T[]> {
  const seen: T[] = [];
  const informer = new Informer(KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath }), {
    path,
  });
  informers.push(informer);
  informer.on((event) => {
    const status = parse(event.object);
    if (status !== undefined) seen.push(status);
  });
  informer.start();
  await informer.waitForSync();
  return seen;
}

/** The stages in the order first seen (later updates show a stage again). */
function stagesOf(seen: readonly { progress?: GrantProgress | undefined }[]): GrantProgress[] {
  return [
    ...new Map(
      seen.flatMap((status) => (status.progress ? [[status.progress.stage, status.progress]] : [])),
    ).values(),
  ] as GrantProgress[];
}

describe('an agent that makes the device a lease wants', () => {
  it('writes provisioning, then booting, with estimates, then the grant of the device it made', async () => {
    const fleet = await TestFleet.create(cluster);
    const agent = await startFleetAgent(cluster, fleet, makesIphone17());
    agents.push(agent);
    // The catalog offers what can be made.
    const status = await eventually(async () => {
      const current = await agent.status();
      return current?.catalog?.models.some((model) => model.name === 'iPhone 17')
        ? current
        : undefined;
    });
    expect(status.devices.some((device) => device.model === 'iPhone 17')).toBe(false);

    // Every version of the Lease's status, as a watch delivers them.
    const leaseNamespace = await makeLeaseNamespace(fleet.admin, agent.name);
    const seen = await watchStatuses(
      simlockPath('lease', { namespace: leaseNamespace }),
      (object) => LeaseObject.safeParse(object).data?.status,
    );

    const before = Date.now();
    await fleet.admin.create(
      simlockPath('lease', { namespace: leaseNamespace }),
      aLease('r1')
        .worker(agent.name)
        .device({ platform: 'ios', model: 'iPhone 17' })
        .expiresIn()
        .obj(),
    );
    const granted = await eventually(() => seen.find((lease) => lease.phase === 'Granted'), {
      what: 'the grant',
      timeoutMs: 30_000,
    });
    expect(granted?.device).toMatchObject({ model: 'iPhone 17', os: '26.0', physical: false });
    expect(granted?.device?.id).toMatch(/^simlock-iphone-17-[0-9a-f]{6}$/);
    expect(granted?.progress).toBeUndefined();

    const steps = stagesOf(seen);
    expect(steps.map((step) => step.stage)).toEqual(['provisioning', 'booting']);
    expect(steps[0]).toMatchObject({ estimatedSeconds: 3, basis: 'default' });
    expect(steps[1]).toMatchObject({ estimatedSeconds: 30, basis: 'default' });
    const [provisioningSince, bootingSince] = steps.map((step) => Date.parse(step.since));
    expect(provisioningSince).toBeGreaterThanOrEqual(before - 1000);
    expect(bootingSince! - provisioningSince!).toBeGreaterThanOrEqual(PROVISION_MS - 50);

    // The device it made is in the Worker's view, leased.
    await eventually(async () =>
      (await agent.status())?.devices.find((device) => device.id === granted?.device?.id)?.state ===
      'leased'
        ? true
        : undefined,
    );
  });

  it('shows the stages on the request, through the controller, until it is granted', async () => {
    const fleet = await TestFleet.create(cluster);
    const agent = await startFleetAgent(cluster, fleet, makesIphone17());
    agents.push(agent);
    const reconciler = controllerFor(cluster, fleet);
    reconcilers.push(reconciler);
    await reconciler.start();
    await takingRequests(reconciler, fleet.name('a'));
    const seen = await watchStatuses(
      simlockPath('leaseRequest', { namespace: fleet.namespace }),
      (object) => LeaseRequestObject.safeParse(object).data?.status,
    );
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 17' });
    const request = await fleet.phase('r1', 'Granted');
    expect(request.status?.device).toMatchObject({ model: 'iPhone 17', os: '26.0' });
    expect(request.status).not.toHaveProperty('progress');
    const steps = stagesOf(seen);
    expect(steps.map((step) => [step.stage, step.model, step.os])).toEqual([
      ['provisioning', 'iPhone 17', '26.0'],
      ['booting', 'iPhone 17', '26.0'],
    ]);
    // Only while Dispatched.
    for (const status of seen) if (status.progress) expect(status.phase).toBe('Dispatched');
  });

  it('derives its limits from this machine when its config sets none, and says so', async () => {
    const fleet = await TestFleet.create(cluster);
    const agent = await startFleetAgent(cluster, fleet, makesIphone17(), { limits: undefined });
    agents.push(agent);
    const expected = deriveLimits(readMachine(), ['ios']);
    const status = await eventually(async () => {
      const current = await agent.status();
      return current?.capacity ? current : undefined;
    });
    expect(status.limitsBasis).toBe(expected.basis);
    expect(status.limitsBasis).toMatch(/^derived from \d+ cores?, [\d.]+ GiB: \d+ running/);
    expect(status.capacity?.global.limit).toBe(expected.limits.running);
    expect(status.capacity?.platforms.ios?.limit).toBe(expected.limits.platforms.ios?.running);
    console.log(`this machine: ${expected.basis}`);
  });
});
