// A grant that has to make or boot a device, against the real API server with the test playing
// the agent: the Lease's progress (provisioning, then booting, each with its estimate) shows on
// the request while it is Dispatched, one status write per change, an Event per stage, and is
// gone once the request leaves Dispatched.
import { describe, expect, it } from 'vitest';
import type { GrantProgress } from '../api/index.js';
import { controllerStories, writesSettled } from '../test/cluster/controller.js';
import { iosStatus } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('progress');
const { setup, metric } = controllerStories(cluster);

const provisioning: GrantProgress = {
  stage: 'provisioning',
  since: '2026-12-01T12:00:00Z',
  estimatedSeconds: 40,
  basis: 'median of 5 on this host',
};
const booting: GrantProgress = {
  stage: 'booting',
  since: '2026-12-01T12:00:41Z',
  estimatedSeconds: 25,
  basis: 'default',
};

describe("a grant's progress", () => {
  it('shows provisioning, then booting, with their estimates, one write each, an Event each, and goes with the grant', async () => {
    const { fleet, reconciler, metrics, start } = await setup();
    const a = await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });

    await fleet.answer('r1', { phase: 'Pending', progress: provisioning });
    const making = await fleet.requestWhere('r1', (r) => r.status?.progress !== undefined);
    expect(making.status).toMatchObject({ phase: 'Dispatched', worker: a, progress: provisioning });
    await writesSettled(reconciler);
    const before = await metric(metrics, 'simlock_status_writes_total');

    // The agent writes its Lease again with the same progress: nothing to copy. Then booting: one
    // write. (Watch events come in order, so the count after booting includes the first's.)
    await fleet.answer('r1', {
      phase: 'Pending',
      message: 'still making it',
      progress: provisioning,
    });
    await fleet.answer('r1', { phase: 'Pending', progress: booting });
    const starting = await fleet.requestWhere('r1', (r) => r.status?.progress?.stage === 'booting');
    expect(starting.status).toMatchObject({ phase: 'Dispatched', progress: booting });
    await writesSettled(reconciler);
    expect((await metric(metrics, 'simlock_status_writes_total')) - before).toBe(1);

    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.some((event) => event.startsWith('Booting: ')) ? list : undefined;
    });
    expect([...events].sort()).toEqual([
      'Booting: Booting iPhone 16 on wrk_a, about 25 s',
      `Dispatched: Dispatched to ${a} (free-capacity)`,
      'Provisioning: Provisioning iPhone 16 on wrk_a, about 40 s',
    ]);
    // In order: the dispatch, then each stage as it began.
    const times = await fleet.eventTimes('r1');
    const at = (reason: string) =>
      Date.parse(times.find((event) => event.reason === reason)?.firstTimestamp ?? '');
    expect(at('Dispatched')).toBeLessThanOrEqual(at('Provisioning'));
    expect(at('Provisioning')).toBeLessThanOrEqual(at('Booting'));

    await fleet.answer('r1', {
      phase: 'Granted',
      progress: null,
      device: {
        id: 'sim-new',
        name: 'iPhone 16',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
        physical: false,
      },
    });
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.device).toMatchObject({ id: 'sim-new' });
    expect(granted.status?.progress).toBeUndefined();
  });

  it('goes when the dispatch comes to nothing: the request waits again without it', async () => {
    const { fleet, start } = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.answer('r1', { phase: 'Pending', progress: provisioning });
    await fleet.requestWhere('r1', (r) => r.status?.progress?.stage === 'provisioning');
    const events = await eventually(async () => {
      const list = await fleet.events('r1');
      return list.some((event) => event.startsWith('Provisioning: ')) ? list : undefined;
    });
    // A request for a class is named by what it asked for: the agent's progress names no model.
    expect(events).toContain(`Provisioning: Provisioning an iOS phone on ${a}, about 40 s`);

    await fleet.answer('r1', {
      phase: 'Refused',
      progress: null,
      refusal: { code: 'NO_CAPACITY', message: 'RAM budget', capacityReason: 'ram-budget' },
    });
    const waiting = await fleet.requestWhere('r1', (r) => r.status?.phase === 'Waiting');
    expect(waiting.status?.progress).toBeUndefined();
  });
});
