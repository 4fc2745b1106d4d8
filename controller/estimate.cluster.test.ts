// The estimate of a waiting request against the real API server, the test playing the agent: two
// requests wait behind two leases with known expiries on a full worker; each shows the end of the
// lease it waits for, and the first is dispatched when its lease ends, within a second of it.
import { describe, expect, it } from 'vitest';
import type { GrantEstimate } from '../api/index.js';
import { controllerStories } from '../test/cluster/controller.js';
import { iosStatus, type RequestView } from '../test/cluster/fleet.js';
import { iosCapacity, iphoneSimulator } from '../test/fixtures/workers.js';
import { eventually, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('estimate');
const { setup } = controllerStories(cluster);

type Seen = RequestView & { status?: { expiresAt?: string; estimate?: GrantEstimate } };

describe('the estimate of a waiting request', () => {
  it('behind two leases with known expiries: each waiting request shows the end it waits for', async () => {
    const { fleet, start } = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await start();
    const iphone = { platform: 'ios', model: 'iPhone 16' };
    await fleet.createRequest('held-1', { ...iphone, durationSeconds: 4 });
    await fleet.grant('held-1', 'sim-1');
    await fleet.createRequest('held-2', { ...iphone, durationSeconds: 600 });
    await fleet.grant('held-2', 'sim-2');
    // The agent's view with both leased (until it shows them, the grants count against it).
    const leased = (id: string) => iphoneSimulator(id, { state: 'leased' });
    await fleet.setStatus(
      'a',
      iosStatus({
        capacity: iosCapacity({ running: 2 }),
        devices: [leased('sim-1'), leased('sim-2')],
      }),
    );
    // The expiry is written with the grant or just after it.
    const expiring = (name: string) =>
      fleet.requestWhere(name, (r) => (r as Seen).status?.expiresAt !== undefined);
    const first = (await expiring('held-1')) as Seen;
    const second = (await expiring('held-2')) as Seen;
    const ends = [first, second].map((held) => Date.parse(held.status?.expiresAt ?? ''));

    await fleet.createRequest('next', iphone);
    await fleet.createRequest('after', iphone);
    const estimated = (name: string) =>
      fleet.requestWhere(name, (r) => (r as Seen).status?.estimate?.grantAt !== undefined);
    const next = (await estimated('next')) as Seen;
    const after = (await estimated('after')) as Seen;
    expect(next.status?.estimate?.basis).toBe('1 lease of iPhone 16 ends before');
    expect(after.status?.estimate?.basis).toBe('2 leases of iPhone 16 end before; 1 ahead of you');
    const nextAt = Date.parse(next.status?.estimate?.grantAt ?? '');
    const afterAt = Date.parse(after.status?.estimate?.grantAt ?? '');
    expect(Math.abs(nextAt - (ends[0] ?? 0))).toBeLessThanOrEqual(1000);
    expect(Math.abs(afterAt - (ends[1] ?? 0))).toBeLessThanOrEqual(1000);

    // The truth: held-1 expires, its slot is given back, and `next` is dispatched then.
    await fleet.phase('held-1', 'Released');
    await fleet.setStatus(
      'a',
      iosStatus({ capacity: iosCapacity({ running: 1 }), devices: [leased('sim-2')] }),
    );
    const lease = await eventually(() => fleet.lease('next'), { what: "next's Lease" });
    const dispatchedAt = Date.parse(lease.metadata.creationTimestamp ?? '');
    expect(Math.abs(dispatchedAt - nextAt)).toBeLessThanOrEqual(1000);
  });
});
