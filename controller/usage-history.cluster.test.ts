// The usage history against the real API server, with the test playing the agent: the leader
// publishes the waits of its grants into the ConfigMap simlock-usage of the system namespace, and a
// controller that starts after it (a restart, a new leader) takes that history up and adds to it,
// instead of starting the day again (ADR 0027).
import { afterEach, describe, expect, it } from 'vitest';
import { USAGE_CONFIGMAP, USAGE_DATA_KEY, UsageHistoryDocument } from '../api/index.js';
import { controllerFor } from '../test/cluster/controller.js';
import { TestFleet, iosStatus } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { iphoneSimulator } from '../test/fixtures/workers.js';
import type { Reconciler } from './reconciler.js';

const cluster = useCluster('usage-history');
const running: Reconciler[] = [];
let fleet: TestFleet | undefined;

afterEach(async () => {
  await Promise.all(running.splice(0).map((reconciler) => reconciler.stop()));
  await fleet?.cleanup();
});

async function published(namespace: string): Promise<UsageHistoryDocument | undefined> {
  try {
    const map = (await cluster.admin.get(
      `/api/v1/namespaces/${namespace}/configmaps/${USAGE_CONFIGMAP}`,
    )) as { data?: Record<string, string> };
    return UsageHistoryDocument.parse(JSON.parse(map.data?.[USAGE_DATA_KEY] ?? ''));
  } catch {
    return undefined;
  }
}

/** The iPhone 16 waits in the published history. */
async function iphoneWaits(namespace: string): Promise<number> {
  const document = await published(namespace);
  return (document?.buckets ?? [])
    .flatMap((bucket) => bucket.waits)
    .filter((waits) => waits.model === 'iPhone 16')
    .reduce((sum, waits) => sum + waits.count, 0);
}

describe('the usage history', () => {
  it('is published by the leader, and taken up by the controller after it', async () => {
    const testFleet = (fleet = await TestFleet.create(cluster));
    await testFleet.addWorker('a', {
      status: iosStatus({ devices: [iphoneSimulator('sim-1'), iphoneSimulator('sim-2')] }),
    });
    const start = async () => {
      const reconciler = controllerFor(cluster, testFleet, { usagePublishIntervalMs: 200 });
      running.push(reconciler);
      await reconciler.start();
      return reconciler;
    };
    const first = await start();
    await testFleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    await testFleet.grant('r1');
    await eventually(
      async () => ((await iphoneWaits(testFleet.namespace)) === 1 ? true : undefined),
      {
        what: 'the first grant published',
        intervalMs: 100,
      },
    );
    const before = await published(testFleet.namespace);

    await first.stop();
    running.splice(running.indexOf(first), 1);
    await start();
    await testFleet.createRequest('r2', { platform: 'ios', model: 'iPhone 16' });
    await testFleet.grant('r2');
    // Both grants: the first from the history the stopped controller wrote.
    await eventually(
      async () => ((await iphoneWaits(testFleet.namespace)) === 2 ? true : undefined),
      {
        what: 'both grants published',
        intervalMs: 100,
      },
    );
    const after = await published(testFleet.namespace);
    expect(after?.since).toBe(before?.since);
    expect(Date.parse(after?.updatedAt ?? '')).toBeGreaterThan(Date.parse(before?.updatedAt ?? ''));
  });
});
