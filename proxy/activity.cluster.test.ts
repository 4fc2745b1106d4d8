// The proxy's activity store against the real API server: a running record is written as it is, an
// end replaces only the record it names (the JSON patch's `test`), and a read gives back what is
// there, string for string, so that an end can name it in turn.
import { describe, expect, it } from 'vitest';
import { simlockPath } from '../runtime/index.js';
import { useCluster } from '../test/cluster/harness.js';
import { leaseStatusActivityStore } from './activity.js';
import { aLease } from '../test/fixtures/objects.js';

const cluster = useCluster('activity');

async function createLease(name: string): Promise<void> {
  await cluster.admin.create(
    simlockPath('lease', { namespace: cluster.namespace }),
    aLease(name).worker('mac-1').expiresIn().obj(),
  );
  await cluster.admin.patch(
    simlockPath('lease', { namespace: cluster.namespace, name, subresource: 'status' }),
    { status: { phase: 'Granted' } },
  );
}

async function activityOf(name: string): Promise<unknown> {
  const lease = (await cluster.admin.get(
    simlockPath('lease', { namespace: cluster.namespace, name }),
  )) as { status?: { activity?: unknown } };
  return lease.status?.activity;
}

describe('the activity store on a Lease', () => {
  it('writes, reads back, and ends only the record it names', async () => {
    const store = leaseStatusActivityStore(cluster.admin);
    const ns = cluster.namespace;
    await createLease('busy');
    // No record yet: an end that names one is refused, and nothing is written.
    const ours = {
      lastExecAt: '2026-12-01T10:00:00.000Z',
      runningUntil: '2026-12-01T10:00:45.000Z',
    };
    const end = {
      lastExecAt: '2026-12-01T10:00:10.000Z',
      runningUntil: '2026-12-01T10:00:10.000Z',
    };
    expect(await store.write(ns, 'busy', end, ours)).toBe('superseded');
    expect(await store.read(ns, 'busy')).toBeUndefined();

    expect(await store.write(ns, 'busy', ours)).toBe('written');
    expect(await store.read(ns, 'busy')).toEqual(ours);
    // Another replica's running record came since: our end leaves it alone.
    const theirs = {
      lastExecAt: '2026-12-01T10:00:05.000Z',
      runningUntil: '2026-12-01T10:00:50.000Z',
    };
    expect(await store.write(ns, 'busy', theirs)).toBe('written');
    expect(await store.write(ns, 'busy', end, ours)).toBe('superseded');
    expect(await activityOf('busy')).toEqual(theirs);
    // Naming what is there, as read, it replaces it.
    const current = await store.read(ns, 'busy');
    expect(await store.write(ns, 'busy', end, current)).toBe('written');
    expect(await activityOf('busy')).toEqual(end);
  });
});
