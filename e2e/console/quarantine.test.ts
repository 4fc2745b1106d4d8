// A quarantined device in the console (token mode, a real Chromium): the Fleet page's device list
// says why, since when and what comes next (its next retry, or that it waits for an operator), and
// an operator (who may patch Workers) puts it back with Unquarantine, which writes the entry the
// agent acts on into the Worker's spec.unquarantine; one who may not patch Workers has no button.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerObject, type Device } from '../../api/index.js';
import { simlockPath } from '../../runtime/index.js';
import { TestFleet, iosStatus } from '../../test/cluster/fleet.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { iphoneSimulator } from '../../test/fixtures/workers.js';
import { tokenConsole } from './console-page.js';
import { person } from './people.js';

const cluster = useCluster('console-quarantine');
let fleet: TestFleet;
const inCluster = tokenConsole(cluster);
let operator: { token: string; username: string };
let viewer: { token: string; username: string };

const read = ['get', 'list', 'watch'];
const since = new Date(Date.now() - 12 * 60_000).toISOString();

function simulator(id: string, quarantine: Device['quarantine']): Device {
  return iphoneSimulator(id, { name: `iPhone 16 (${id})`, state: 'quarantined', quarantine });
}

beforeAll(async () => {
  await inCluster.launch();
  fleet = await TestFleet.create(cluster);
  await fleet.addWorker('a', {
    label: 'worker-a',
    status: iosStatus({
      devices: [
        simulator('sim-waits', { reason: 'boot failed: timed out', since, retries: 3 }),
        simulator('sim-retries', {
          reason: 'reclaim failed: erase timed out',
          since,
          retries: 1,
          nextRetryAt: new Date(Date.now() + 4 * 60_000).toISOString(),
        }),
      ],
    }),
  });
  const rules = (verbs: string[]) => [
    { apiGroups: ['simlock.dev'], resources: ['leaserequests', 'leases'], verbs: read },
    { apiGroups: ['simlock.dev'], resources: ['workers'], verbs },
  ];
  operator = await person(cluster.admin, cluster.namespace, 'olga', {
    clusterRules: rules([...read, 'patch']),
  });
  viewer = await person(cluster.admin, cluster.namespace, 'vic', { clusterRules: rules(read) });
  await inCluster.start(fleet.namespace);
}, 120_000);

afterAll(() => fleet?.cleanup());

/** The Fleet page with worker a's devices open. */
async function devicesOfWorkerA(token: string): Promise<Page> {
  const page = await inCluster.logIn(token, '/fleet');
  await page.locator(`tr[data-worker="${fleet.name('a')}"] button.disclosure`).click();
  await page.locator('tr[data-device="sim-waits"]').waitFor();
  return page;
}

describe('a quarantined device in the console', () => {
  it('says why, since when and what comes next, and an operator unquarantines it', async () => {
    const page = await devicesOfWorkerA(operator.token);
    const waits = page.locator('tr[data-device="sim-waits"] .device-quarantine');
    expect(await waits.textContent()).toMatch(
      /^quarantined 1\dm \d\ds: boot failed: timed out · 3 retries failed, waits for an operator/,
    );
    expect(
      await page.locator('tr[data-device="sim-retries"] .device-quarantine').textContent(),
    ).toMatch(/^quarantined 1\dm \d\ds: reclaim failed: erase timed out · retry 2 in \d+m \d\ds/);

    await page
      .getByRole('button', { name: 'Unquarantine iPhone 16 (sim-waits) on worker-a' })
      .click();
    const worker = await eventually(
      async () => {
        const read = WorkerObject.parse(
          await cluster.admin.get(simlockPath('worker', { name: fleet.name('a') })),
        );
        return read.spec.unquarantine?.length ? read : undefined;
      },
      { what: "the Unquarantine entry in the Worker's spec" },
    );
    expect(worker.spec.unquarantine?.map((entry) => entry.device)).toEqual(['sim-waits']);
    expect(Date.parse(worker.spec.unquarantine?.[0]?.at ?? '')).toBeGreaterThan(Date.parse(since));
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.context().close();
  });

  it('offers no Unquarantine to who may not patch Workers', async () => {
    const page = await devicesOfWorkerA(viewer.token);
    expect(await page.getByRole('button', { name: /^Unquarantine / }).count()).toBe(0);
    await page.context().close();
  });
});
