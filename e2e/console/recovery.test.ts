// The console's Leases page in a real Chromium, live: a lease whose device crashed and is booted
// again under it shows a Recovering badge with the cause and the estimate, which goes once the
// device is back, without a reload. The controller in-process, the test playing the agent (it
// writes the Lease's recovery, then its end).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVICE_RECOVERING } from '../../api/index.js';
import type { Reconciler } from '../../controller/index.js';
import { controllerFor } from '../../test/cluster/controller.js';
import { TestFleet, iosStatus } from '../../test/cluster/fleet.js';
import { useCluster } from '../../test/cluster/harness.js';
import { pathOfLease } from '../../test/cluster/leases.js';
import { localConsole } from './console-page.js';

const cluster = useCluster('console-recovery');
const live = localConsole(cluster);
let fleet: TestFleet;
let controller: Reconciler;
let page: Page;

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  controller = controllerFor(cluster, fleet);
  await Promise.all([live.launch(), controller.start()]);
  await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
  page = await live.open(fleet.namespace);
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await fleet?.cleanup();
});

/** Writes the status of request `name`'s Lease, wherever it lives (its worker's namespace). */
async function patchLease(name: string, status: Record<string, unknown>): Promise<void> {
  const lease = await fleet.lease(name);
  if (!lease) throw new Error(`request ${name} has no Lease`);
  await fleet.admin.patch(pathOfLease(lease, 'status'), { status });
}

describe("the console's Leases page", () => {
  it('shows a lease recovering, with the cause and the estimate, until its device is back', async () => {
    await fleet.createRequest('ci-1', { platform: 'ios', model: 'iPhone 16' });
    await fleet.grant('ci-1');
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    const row = page.locator(`#leases tr[data-lease="${fleet.namespace}/ci-1"]`);
    await row.waitFor();
    expect(await row.locator('.recovering').count()).toBe(0);

    const since = new Date().toISOString();
    await patchLease('ci-1', {
      recovery: { since, cause: 'shut down', crashes: 1, crashBudget: 3, estimatedSeconds: 40 },
      conditions: [
        {
          type: DEVICE_RECOVERING,
          status: 'True',
          reason: 'DeviceCrashed',
          message: 'iPhone 16 (sim-1) shut down; booting it again',
          lastTransitionTime: since,
        },
      ],
    });
    const recovering = row.locator('.recovering');
    await recovering.waitFor();
    expect((await recovering.textContent())?.replace(/\s+/g, ' ').trim()).toBe(
      'Recovering device iPhone 16 (sim-1) crashed (shut down): booting it again, back in about 40 s',
    );

    await patchLease('ci-1', {
      recovery: null,
      conditions: [
        {
          type: DEVICE_RECOVERING,
          status: 'False',
          reason: 'DeviceRecovered',
          message: 'iPhone 16 (sim-1) is back',
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    });
    await recovering.waitFor({ state: 'detached' });
    // Still held, on the page as before.
    expect(await row.count()).toBe(1);
  });
});
