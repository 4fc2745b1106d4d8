// The console's Usage page in a real Chromium against a real fleet (controller, proxy and a
// fake-driver agent as processes): a few leases run, one of them waiting for the single iOS slot,
// and the page draws the waits and the utilisation of the last hour and day from the controller's
// own history (the ConfigMap simlock-usage, ADR 0027, published here every second), with the line
// on the class whose requests waited longest. Takes the screenshot of docs/CONSOLE.md when
// SIMLOCK_SCREENSHOTS is set (npm run docs:screenshots).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_CONFIGMAP, USAGE_DATA_KEY, UsageHistoryDocument } from '../../api/index.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { iosSimulators, startAcceptanceFleet, type AcceptanceFleet } from '../acceptance/fleet.js';
import { localConsole, shoot, startTokenConsole } from './console-page.js';
import { person } from './people.js';

const cluster = useCluster('console-usage');
const live = localConsole(cluster);
let fleet: AcceptanceFleet;
let page: Page;

beforeAll(async () => {
  [fleet] = await Promise.all([
    startAcceptanceFleet(
      cluster,
      [
        {
          name: 'worker-a',
          script: iosSimulators,
          limits: { running: 4, platforms: { ios: { running: 1 } } },
        },
      ],
      { controllerArgs: ['--usage-publish-interval', '1s'] },
    ),
    live.launch(),
  ]);
  page = await live.open(fleet.fleet.namespace, { proxyUrl: fleet.running.proxyUrl });
}, 150_000);

afterAll(() => fleet?.stop());

/** The history the controller last published. */
async function published(): Promise<UsageHistoryDocument | undefined> {
  try {
    const map = (await cluster.admin.get(
      `/api/v1/namespaces/${fleet.fleet.namespace}/configmaps/${USAGE_CONFIGMAP}`,
    )) as { data?: Record<string, string> };
    return UsageHistoryDocument.parse(JSON.parse(map.data?.[USAGE_DATA_KEY] ?? ''));
  } catch {
    return undefined;
  }
}

const granted = (document: UsageHistoryDocument | undefined) =>
  (document?.buckets ?? []).flatMap((bucket) => bucket.waits).reduce((n, w) => n + w.count, 0);

describe("the console's Usage page", () => {
  it('draws the waits and utilisation of a fleet that ran a few leases, and names the class that waited longest', async () => {
    // One iOS slot: ci-2 waits while ci-1 holds it, for about 3 s.
    const first = await fleet.leaseIos('--device', 'iPhone 16', '--name', 'ci-1');
    expect(first.exitCode, first.stderr).toBe(0);
    const second = fleet.leaseIos('--device', 'iPhone 16', '--name', 'ci-2', '--timeout', '120s');
    await fleet.fleet.phase('ci-2', 'Waiting');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await fleet.simlock(['release', 'ci-1'])).exitCode).toBe(0);
    expect((await second).exitCode).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await fleet.simlock(['release', 'ci-2'])).exitCode).toBe(0);
    // Any iOS device: a class of its own.
    const third = await fleet.leaseIos('--name', 'ci-3');
    expect(third.exitCode, third.stderr).toBe(0);

    // The controller has published the three grants and some leased device time.
    const document = await eventually(
      async () => {
        const now = await published();
        const leased = (now?.buckets ?? [])
          .flatMap((bucket) => bucket.devices)
          .filter((devices) => devices.model === 'iPhone 16')
          .reduce((sum, devices) => sum + devices.leasedSeconds, 0);
        return granted(now) === 3 && leased > 0 ? now : undefined;
      },
      { what: 'the usage history with three grants', timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(document.buckets.length).toBeGreaterThan(0);

    await page.goto(live.server.openUrl);
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const summary = page.locator('#usage-summary');
    await summary.waitFor();
    expect(await summary.textContent()).toMatch(
      /^Requests for iPhone 16 waited \d+s in total in the last day \(2 granted; median [\d.]+s, p90 [\d.]+s\)/,
    );
    // Waits: median and p90 drawn where requests were granted, in the last hour and the last day.
    for (const window of ['hour', 'day']) {
      expect(await page.locator(`#waits-${window} circle.point`).count()).toBeGreaterThanOrEqual(2);
      expect(
        await page
          .locator(`#utilisation-${window} g[data-series="iPhone 16"] circle.point`)
          .count(),
      ).toBeGreaterThanOrEqual(1);
    }
    const rows = await page.locator('#classes-day tbody tr th').allTextContents();
    expect(rows).toEqual(['iPhone 16', 'any iOS device']);
    await shoot(page, 'usage');
    expect((await fleet.simlock(['release', 'ci-3'])).exitCode).toBe(0);
  });

  it("shows the API server's refusal to a person who may not read the usage history", async () => {
    // In the cluster (token mode): requests and leases of the namespace, not the ConfigMap.
    const read = ['get', 'list', 'watch'];
    const teamMember = await person(cluster.admin, fleet.fleet.namespace, 'tom', {
      namespaces: [fleet.fleet.namespace],
      namespaceRules: [
        { apiGroups: ['simlock.dev'], resources: ['leaserequests', 'leases'], verbs: read },
      ],
    });
    const inCluster = await startTokenConsole(cluster.admin, fleet.fleet.namespace);
    try {
      const tab = await (await live.browser.newContext()).newPage();
      await tab.goto(`${inCluster.url}/usage`);
      await tab.getByLabel('Bearer token').fill(teamMember.token);
      await tab.getByRole('button', { name: 'Log in' }).click();
      const refusal = tab.getByRole('alert').filter({ hasText: 'usage history cannot be shown' });
      await refusal.waitFor();
      expect(await refusal.textContent()).toMatch(
        /FORBIDDEN: configmaps "simlock-usage" is forbidden: User ".*:tom" cannot get resource "configmaps"/,
      );
      expect(await tab.locator('#usage-summary').count()).toBe(0);
      await tab.context().close();
    } finally {
      await inCluster.stop();
    }
  });
});
