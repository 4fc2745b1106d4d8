// The console's Events page in a real Chromium (token mode, each person's own access): simlock's
// Events on LeaseRequests, live, in every namespace the person may read Events of, filtered by
// reason, request and worker. The controller in-process records the Events; the test plays the
// agent. An Event in a namespace the person may not read is not shown to them. Takes the screenshot
// of docs/CONSOLE.md when SIMLOCK_SCREENSHOTS is set.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reconciler } from '../../controller/index.js';
import { controllerFor } from '../../test/cluster/controller.js';
import { TestFleet, iosStatus } from '../../test/cluster/fleet.js';
import { useCluster } from '../../test/cluster/harness.js';
import { shoot, tokenConsole } from './console-page.js';
import { EVERYTHING, person } from './people.js';

const cluster = useCluster('console-events');
let fleet: TestFleet;
let elsewhere: TestFleet;
let controller: Reconciler;
const inCluster = tokenConsole(cluster);
let operator: { token: string };
let teamMember: { token: string };

const read = ['get', 'list', 'watch'];

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  elsewhere = await TestFleet.create(cluster);
  controller = controllerFor(cluster, fleet);
  await Promise.all([inCluster.launch(), controller.start()]);
  await fleet.addWorker('a', { label: 'worker-a', status: iosStatus() });
  operator = await person(cluster.admin, fleet.namespace, 'olga', { clusterRules: EVERYTHING });
  // Requests, leases and Events of the fleet's namespace only; no Workers.
  teamMember = await person(cluster.admin, fleet.namespace, 'tom', {
    namespaces: [fleet.namespace],
    namespaceRules: [
      { apiGroups: ['simlock.dev'], resources: ['leaserequests', 'leases'], verbs: read },
      { apiGroups: [''], resources: ['events'], verbs: read },
    ],
  });
  // An Event on a request of another namespace (no controller there: written as one would be).
  await cluster.admin.create(`/api/v1/namespaces/${elsewhere.namespace}/events`, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: 'other-1.', namespace: elsewhere.namespace },
    involvedObject: {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'LeaseRequest',
      name: 'other-1',
      namespace: elsewhere.namespace,
    },
    reason: 'Failed',
    message: 'NO_CAPACITY: no worker serves android',
    type: 'Warning',
    firstTimestamp: new Date().toISOString(),
    lastTimestamp: new Date().toISOString(),
    count: 1,
  });
  await inCluster.start(fleet.namespace);
  // Events of this file: a grant on worker-a, and a request no worker can serve.
  await fleet.createRequest('ci-1', { platform: 'ios', model: 'iPhone 16', holder: 'ci' });
  await fleet.grant('ci-1');
  await fleet.createRequest('ci-2', { platform: 'android', model: 'Pixel 8' });
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await Promise.all([fleet?.cleanup(), elsewhere?.cleanup()]);
});

async function eventsPage(token: string, query = ''): Promise<Page> {
  const page = await inCluster.logIn(token, `/events${query}`);
  await page.getByRole('heading', { name: 'Events' }).waitFor();
  return page;
}

/** The rows of the Events table: reason, namespace/request, message. */
async function rows(page: Page): Promise<string[]> {
  const result: string[] = [];
  for (const row of await page.locator('#events-table tbody tr').all()) {
    const [reason, request, message] = await Promise.all([
      row.locator('th').textContent(),
      row.locator('td').nth(1).textContent(),
      row.locator('td').nth(2).textContent(),
    ]);
    result.push(`${reason} ${request} ${message}`);
  }
  return result;
}

const row = (page: Page, request: string, reason: string) =>
  page.locator(`#events-table tr[data-reason="${reason}"]`).filter({
    has: page.getByRole('link', { name: request, exact: true }),
  });

describe("the console's Events page", () => {
  it("shows a request's Events in the namespaces one may read, filters by reason, and follows live", async () => {
    const page = await eventsPage(teamMember.token);
    await row(page, 'ci-1', 'Granted').waitFor();
    await row(page, 'ci-2', 'Failed').waitFor();
    expect(await row(page, 'ci-1', 'Granted').locator('td').nth(2).textContent()).toMatch(
      /^Granted iPhone 16 .* on worker-a/,
    );
    // Not the other namespace's: this person may not read its Events.
    expect(
      await page.locator(`#events-table tr[data-event^="${elsewhere.namespace}/"]`).count(),
    ).toBe(0);
    await page.evaluate('window.simlockMarker = 1');

    await page.getByLabel('Reason').selectOption('Failed');
    await page
      .locator('#events-table tr[data-reason="Granted"]')
      .first()
      .waitFor({ state: 'detached' });
    expect(await rows(page)).toEqual([
      `Failedwarning ci-2${fleet.namespace} NO_DRIVER: no worker serves Android`,
    ]);
    expect(new URL(page.url()).search).toBe('?reason=Failed');

    // A new request's Event appears under the filter, without a reload.
    await fleet.createRequest('ci-3', { platform: 'android', model: 'Pixel 8' });
    await row(page, 'ci-3', 'Failed').waitFor();
    expect(await page.locator('#events-table tbody tr[data-reason="Failed"]').count()).toBe(2);
    expect(await page.evaluate<number>('window.simlockMarker')).toBe(1);

    await page.getByLabel('Request').fill('ci-3');
    await page.locator('#events-table tbody tr').nth(1).waitFor({ state: 'detached' });
    expect(await rows(page)).toEqual([
      `Failedwarning ci-3${fleet.namespace} NO_DRIVER: no worker serves Android`,
    ]);
    await page.context().close();
  });

  it('shows every namespace to who may read them all, and filters by worker', async () => {
    const page = await eventsPage(
      operator.token,
      `?request=${encodeURIComponent(fleet.namespace)}`,
    );
    await row(page, 'ci-1', 'Granted').waitFor();
    await shoot(page, 'events');
    // By its name: other files' workers may be labelled worker-a too.
    await page.getByLabel('Worker').selectOption(fleet.name('a'));
    await row(page, 'ci-2', 'Failed').waitFor({ state: 'detached' });
    expect(await rows(page)).toEqual([expect.stringMatching(/^Granted ci-1\s*.+ on worker-a/)]);

    await page.getByLabel('Worker').selectOption('');
    await page.getByLabel('Request').fill(elsewhere.namespace);
    await page.locator(`#events-table tr[data-event^="${elsewhere.namespace}/other-1."]`).waitFor();
    expect(await rows(page)).toEqual([
      `Failedwarning other-1${elsewhere.namespace} NO_CAPACITY: no worker serves android`,
    ]);
    await page.context().close();
  });
});
