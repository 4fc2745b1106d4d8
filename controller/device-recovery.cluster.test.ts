// A granted device that crashes and is booted again under the same lease, against the real API
// server with the test playing the agent: the Lease's recovery and its DeviceRecovering condition
// show on the request while it is Granted, with an Event when it starts and when it is back; a
// device past its crash budget (the agent marks the Lease Lost) ends the request, and says so.
import { describe, expect, it } from 'vitest';
import { DEVICE_RECOVERING, type LeaseRequestStatus } from '../api/index.js';
import { makeRecoveryWrites } from '../test/fixtures/device-recovery.js';
import { controllerStories } from '../test/cluster/controller.js';
import { iosStatus, type TestFleet } from '../test/cluster/fleet.js';
import { pathOfLease } from '../test/cluster/leases.js';
import { eventually, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('recovery');
const { setup } = controllerStories(cluster);

const { recovery, crashed, back } = makeRecoveryWrites('2026-12-01T12:00:00Z');

/** Writes the Lease's status as the agent would (a merge patch: null takes a field off). */
async function agentWrites(fleet: TestFleet, name: string, status: Record<string, unknown>) {
  const lease = await fleet.lease(name);
  if (!lease) throw new Error(`no Lease of ${name}`);
  await fleet.admin.patch(pathOfLease(lease, 'status'), { status });
}

/** The request's status as the contract has it (the fleet's view of it is narrower). */
const shown = (request: { status?: unknown }) =>
  (request.status ?? { phase: 'Pending' }) as LeaseRequestStatus;
const recoveringOf = (request: { status?: unknown }) =>
  shown(request).conditions?.find((condition) => condition.type === DEVICE_RECOVERING);

async function eventsWith(fleet: TestFleet, name: string, reason: string): Promise<string[]> {
  return eventually(
    async () => {
      const list = await fleet.events(name);
      return list.some((event) => event.startsWith(`${reason}: `)) ? list : undefined;
    },
    { what: `${reason} Event on ${name}` },
  );
}

describe("a granted device's recovery", () => {
  it('shows the recovery and the condition while it lasts, then DeviceRecovered, with an Event each', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');

    await agentWrites(fleet, 'r1', { recovery, conditions: [crashed] });
    const during = await fleet.requestWhere('r1', (r) => shown(r).recovery !== undefined);
    expect(during.status).toMatchObject({ phase: 'Granted', recovery });
    expect(recoveringOf(during)).toEqual(crashed);
    const told = await eventsWith(fleet, 'r1', 'DeviceRecovering');
    expect(told).toContain(
      'DeviceRecovering: Device iPhone 16 (sim-1) crashed (shut down): booting it again, back in about 40 s',
    );

    await agentWrites(fleet, 'r1', { recovery: null, conditions: [back] });
    const after = await fleet.requestWhere('r1', (r) => recoveringOf(r)?.status === 'False');
    expect(after.status?.phase).toBe('Granted');
    expect(shown(after).recovery).toBeUndefined();
    expect(recoveringOf(after)).toMatchObject({
      status: 'False',
      reason: 'DeviceRecovered',
    });
    const events = await eventsWith(fleet, 'r1', 'DeviceRecovered');
    expect(events).toContain(
      'DeviceRecovered: Device iPhone 16 (sim-1) is back after its crash (shut down)',
    );
    // Told once each: the request's status is as the Lease says, and nothing more comes of it.
    expect(events.filter((event) => event.startsWith('DeviceRecover'))).toHaveLength(2);
  });

  it('past its crash budget (the Lease marked Lost) the request is released, recovering no more', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    await agentWrites(fleet, 'r1', { recovery, conditions: [crashed] });
    await fleet.requestWhere('r1', (r) => shown(r).recovery !== undefined);

    const message = 'iPhone 16 (sim-1) crashed 3 times within 10 minutes';
    await agentWrites(fleet, 'r1', { phase: 'Lost', message, recovery: null });
    const ended = await fleet.phase('r1', 'Released');
    expect(shown(ended).recovery).toBeUndefined();
    expect(recoveringOf(ended)).toMatchObject({
      status: 'False',
      reason: 'Lost',
      message,
    });
    expect(ended.status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'Granted', status: 'False', reason: 'Lost', message }),
    );
    await fleet.leaseGone('r1');
  });

  it('a lease Lost by the crash after its device was back says so, not "booted again"', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    await agentWrites(fleet, 'r1', { recovery, conditions: [crashed] });
    await fleet.requestWhere('r1', (r) => shown(r).recovery !== undefined);
    await agentWrites(fleet, 'r1', { recovery: null, conditions: [back] });
    await fleet.requestWhere('r1', (r) => recoveringOf(r)?.reason === 'DeviceRecovered');

    // The crash that uses up the budget ends the lease at once: no recovery is shown first.
    const message = 'iPhone 16 (sim-1) crashed 3 times within 10 minutes';
    await agentWrites(fleet, 'r1', { phase: 'Lost', message });
    const ended = await fleet.phase('r1', 'Released');
    expect(recoveringOf(ended)).toMatchObject({ status: 'False', reason: 'Lost', message });
  });
});
