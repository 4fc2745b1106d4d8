// The console in a real Chromium against a real fleet (controller, proxy, fake-driver agents):
// DESIGN.md §3.2's two inspector rows and what undraining does to them, live; an agent's own queue;
// release from the Leases page; the screenshot of a leased device. It also takes the screenshots
// of docs/CONSOLE.md when SIMLOCK_SCREENSHOTS is set (npm run docs:screenshots).
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_SCREENSHOT_PNG } from '../../agent/index.js';
import { simlockPath } from '../../runtime/index.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import {
  designCaseWaiting,
  fillThenAskLocally,
  iosSimulators,
  startAcceptanceFleet,
  type AcceptanceFleet,
} from '../acceptance/fleet.js';
import { localConsole, shoot } from './console-page.js';

const cluster = useCluster('console');
const live = localConsole(cluster);
let fleet: AcceptanceFleet;
let page: Page;
const oneIosSlot = { running: 4, platforms: { ios: { running: 1 } } };

/** The texts of the rows of a table, cell by cell. */
async function rows(selector: string): Promise<string[][]> {
  const result: string[][] = [];
  for (const row of await page.locator(`${selector} tbody tr`).all()) {
    result.push((await row.locator('th, td').allTextContents()).map((text) => text.trim()));
  }
  return result;
}

beforeAll(async () => {
  [fleet] = await Promise.all([
    startAcceptanceFleet(cluster, [
      { name: 'worker-a', script: iosSimulators, limits: oneIosSlot },
      { name: 'worker-b', script: iosSimulators, limits: oneIosSlot },
    ]),
    live.launch(),
  ]);
  // A person with a token in their kubeconfig (the proxy takes bearer tokens), allowed everything.
  page = await live.open(fleet.fleet.namespace, { proxyUrl: fleet.running.proxyUrl });
}, 150_000);

afterAll(() => fleet?.stop());

describe('the console, live in Chromium', () => {
  it('shows the case of DESIGN.md §3.2: drained and full by label, then the grant after an undrain, without a reload', async () => {
    const { other, waiting } = await designCaseWaiting(fleet);
    const key = `${fleet.fleet.namespace}/req-3`;
    await page.evaluate('window.simlockMarker = 1');
    await page.locator(`#waiting tr[data-request="${key}"]`).waitFor();
    await page.locator('#inspector tbody tr').nth(1).waitFor();
    const expected = ['worker-a', 'worker-b'].map((worker) => [
      worker,
      worker === other ? 'Drained' : 'Full: running limit for iOS',
    ]);
    await eventually(
      async () =>
        JSON.stringify(await rows('#inspector')) === JSON.stringify(expected) ? true : undefined,
      {
        what: 'the two inspector rows',
      },
    );
    expect(await rows('#inspector')).toEqual(expected);
    // Above them, when it should be granted: the holder's lease ends at a known time.
    const estimate = page.locator('.inspector p[data-estimate]');
    await estimate.waitFor();
    expect(await estimate.textContent()).toMatch(
      /^Estimate: about .+ \(1 .*lease.* ends before\)$/,
    );
    // Under the rows, what would unblock it (ADR 0026): among the cheapest, undraining the other.
    await page
      .locator('#unblock li')
      .filter({ hasText: `undrain ${fleet.worker(other)}` })
      .waitFor({ timeout: 10_000 });
    await shoot(page, 'requests');

    // Undrain from the Fleet page in a second tab; the first one follows with no reload.
    const fleetPage = await live.context.newPage();
    await fleetPage.goto(`${live.server.url}/fleet`);
    await shootPage(fleetPage, 'fleet');
    await fleetPage
      .locator(`tr[data-worker="${fleet.worker(other)}"]`)
      .getByRole('button', { name: `Undrain ${other}` })
      .click();
    await page
      .locator(`#waiting tr[data-request="${key}"]`)
      .waitFor({ state: 'detached', timeout: 20_000 });
    await page.locator(`#granted-requests tr[data-request="${key}"]`).waitFor();
    expect(await page.evaluate<number>('window.simlockMarker')).toBe(1);
    expect((await waiting).exitCode).toBe(0);
    await fleetPage.close();

    // The request's page: its spec, status and Events timeline.
    await page.getByRole('link', { name: 'req-3' }).first().click();
    await page.locator('#events li').filter({ hasText: 'Granted' }).first().waitFor();
    expect(await page.locator('#request-status').textContent()).toContain('Granted');
    await shoot(page, 'request');
    await page.getByRole('link', { name: 'Requests', exact: true }).click();
    await fleet.simlock(['release', 'req-3']);
    await fleet.simlock(['release', 'holder']);
  });

  it('shows busy with its own queue for a worker with a local request waiting, and the local entry once', async () => {
    const { local } = await fillThenAskLocally(fleet);
    await page.locator('#local-requests tbody tr').first().waitFor();
    const waiting = fleet.leaseIos('--holder', 'ci', '--name', 'fleet-c', '--timeout', '120s');
    const key = `${fleet.fleet.namespace}/fleet-c`;
    await page
      .locator(`#waiting tr[data-request="${key}"]`)
      .getByRole('button', { name: 'Inspect' })
      .click();
    const expected = [
      ['worker-a', 'Busy with its own queue'],
      ['worker-b', 'Full: running limit for iOS'],
    ];
    await eventually(
      async () =>
        JSON.stringify(await rows('#inspector')) === JSON.stringify(expected) ? true : undefined,
      {
        what: 'busy and full rows',
      },
    );
    // The console shows the whole fleet: another file's agent labelled worker-a may have an entry
    // of its own just now (e2e/acceptance/reasons.test.ts makes the same one). Ours, by the ids
    // this fleet's worker-a lists in its queue, must be there once.
    const ours = await eventually(async () => {
      const worker = (await cluster.admin.get(
        simlockPath('worker', { name: fleet.worker('worker-a') }),
      )) as { status?: { queue?: { id: string }[] } };
      const ids = (worker.status?.queue ?? []).map((entry) => entry.id);
      return ids.length > 0 ? ids : undefined;
    });
    const shown = await rows('#local-requests');
    const localRows = shown.filter((row) => ours.includes(row[0] ?? ''));
    expect(localRows, JSON.stringify(shown)).toHaveLength(1);
    expect(localRows[0]?.slice(1)).toEqual([
      'worker-a',
      'local-agent',
      'iOS iPhone 16',
      'Full: running limit for iOS',
    ]);

    await fleet.simlock(['release', 'fill-1']);
    await fleet.simlock(['release', 'fill-2']);
    const answer = await local;
    expect(answer.status).toBe(200);
    expect((await waiting).exitCode).toBe(0);
    const { lease } = (await answer.json()) as { lease: string };
    await fleet.local('worker-a', 'DELETE', `/v1/local/leases/${lease}`);
  });

  it('takes a screenshot of a leased device through the proxy and the agent: the PNG the driver made', async () => {
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    const key = `${fleet.fleet.namespace}/fleet-c`;
    const row = page.locator(`#leases tr[data-lease="${key}"]`);
    await row.getByRole('button', { name: 'Screenshot' }).click();
    const image = page.locator('.screenshot img');
    await image.waitFor();
    // The bytes the page shows, read back from the image's own blob URL.
    const bytes = await page.evaluate<number[]>(`(async () => {
      const img = document.querySelector('.screenshot img');
      const buffer = await (await fetch(img.src)).arrayBuffer();
      return [...new Uint8Array(buffer)];
    })()`);
    expect(Buffer.from(bytes).equals(FAKE_SCREENSHOT_PNG)).toBe(true);
    expect(
      await page.evaluate<number>("document.querySelector('.screenshot img').naturalWidth"),
    ).toBe(180);
    await shoot(page, 'leases');
  });

  it('releases from the Leases page, and the Fleet page shows the device free', async () => {
    const key = `${fleet.fleet.namespace}/fleet-c`;
    const row = page.locator(`#leases tr[data-lease="${key}"]`);
    const deviceId =
      ((await row.locator('td').nth(1).locator('.sub').textContent()) ?? '').split(' · ')[1] ?? '';
    const workerLabel = ((await row.locator('td').nth(2).textContent()) ?? '').trim();
    expect(deviceId).not.toBe('');
    await row.getByRole('button', { name: 'Release fleet-c' }).click();
    await row.waitFor({ state: 'detached', timeout: 20_000 });
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    for (const worker of ['worker-a', 'worker-b']) {
      const button = page.locator(`tr[data-worker="${fleet.worker(worker)}"] button.disclosure`);
      if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
    }
    await page
      .locator(
        `tr.details[data-worker="${fleet.worker(workerLabel)}"] tr[data-device="${deviceId}"] .device-state`,
      )
      .filter({ hasText: /^ready$/ })
      .waitFor({ timeout: 20_000 });
    await eventually(
      async () =>
        (
          (await fleet.fleet.admin.get(
            `/apis/simlock.dev/v1alpha1/namespaces/${fleet.fleet.namespace}/leaserequests`,
          )) as { items: unknown[] }
        ).items.length === 0
          ? true
          : undefined,
      { what: 'every request gone' },
    );
  });
});

async function shootPage(target: Page, name: string): Promise<void> {
  if (!process.env.SIMLOCK_SCREENSHOTS) return;
  await target.locator('tbody tr').first().waitFor();
  await shoot(target, name);
}
