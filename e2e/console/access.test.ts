// The console in the cluster (token mode) in a real Chromium: no token gives the login page and a
// bad one 401; each person sees what their RBAC allows, whatever the console's own identity (here
// the admin's) could see; and an action the API server refuses is refused with its message.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { isAlreadyExists, simlockPath } from '../../runtime/index.js';
import { TestFleet, iosFullStatus, iosStatus } from '../../test/cluster/fleet.js';
import { useCluster } from '../../test/cluster/harness.js';
import { tokenConsole } from './console-page.js';
import { person } from './people.js';
import { aLeaseRequest } from '../../test/fixtures/objects.js';

const cluster = useCluster('console-rbac');
const TEAMS = ['team-a', 'team-b'];
let fleet: TestFleet;
const inCluster = tokenConsole(cluster);
let alice: { token: string; username: string };
let bob: { token: string; username: string };

const read = ['get', 'list', 'watch'];

async function request(namespace: string, name: string): Promise<void> {
  await cluster.admin.create(
    simlockPath('leaseRequest', { namespace }),
    aLeaseRequest(name)
      .ios('iPhone 16')
      .spec({ holder: `${namespace}-ci` })
      .obj(),
  );
  // What the controller would write for a request that waits (no controller runs here).
  await cluster.admin.patch(
    simlockPath('leaseRequest', { namespace, name, subresource: 'status' }),
    {
      status: {
        phase: 'Waiting',
        position: 1,
        queuedAt: new Date().toISOString(),
        workers: [
          { worker: fleet.name('a'), reason: 'drained' },
          { worker: fleet.name('b'), reason: 'full', capacityReason: 'platform-running-limit' },
        ],
        summary: '2 workers: 1 drained, 1 full',
      },
    },
  );
}

async function logIn(token: string): Promise<Page> {
  // Live once the person's first snapshot is in and every watch is current: what the page lists
  // is then all it will list, so a count read after it is the answer, not a moment of loading.
  const page = await inCluster.logIn(token);
  await page.getByRole('heading', { name: 'Requests' }).waitFor();
  return page;
}

beforeAll(async () => {
  await inCluster.launch();
  fleet = await TestFleet.create(cluster);
  await fleet.addWorker('a', { label: 'worker-a', drained: true, status: iosStatus() });
  await fleet.addWorker('b', { label: 'worker-b', status: iosFullStatus() });
  for (const team of TEAMS) {
    try {
      await cluster.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: team },
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
    await request(team, `${team}-req`);
  }
  // Alice reads requests (and so the leases they hold: no Lease rule, ADR 0034) and Events in
  // team-a only, and no Workers.
  alice = await person(cluster.admin, cluster.namespace, 'alice', {
    namespaces: ['team-a'],
    namespaceRules: [
      {
        apiGroups: ['simlock.dev'],
        resources: ['leaserequests'],
        verbs: [...read, 'delete'],
      },
      { apiGroups: [''], resources: ['events'], verbs: read },
    ],
  });
  // Bob reads everything of simlock's, Workers included, and may not drain.
  bob = await person(cluster.admin, cluster.namespace, 'bob', {
    clusterRules: [
      {
        apiGroups: ['simlock.dev'],
        resources: ['leaserequests', 'leases', 'workers'],
        verbs: read,
      },
    ],
  });
  await inCluster.start(fleet.namespace);
}, 120_000);

describe('the console in token mode', () => {
  it('asks for a token: none gives the login page, a bad one 401', async () => {
    const page = await (await inCluster.browser.newContext()).newPage();
    await page.goto(`${inCluster.server.url}/fleet`);
    await page.getByLabel('Bearer token').waitFor();
    const session = await page.request.get(`${inCluster.server.url}/api/session`);
    expect(session.status()).toBe(401);
    await page.getByLabel('Bearer token').fill('not-a-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(
      /UNAUTHENTICATED: .*\(HTTP 401\)/,
    );
    const bearer = await page.request.get(`${inCluster.server.url}/api/session`, {
      headers: { authorization: 'Bearer not-a-token' },
    });
    expect(bearer.status()).toBe(401);
    await page.context().close();
  });

  it('shows a person of team-a only team-a, and workers by raw name when they may not list Workers', async () => {
    const page = await logIn(alice.token);
    await page.locator('#waiting tr[data-request="team-a/team-a-req"]').waitFor();
    expect(await page.locator('#waiting tbody tr').count()).toBe(1);
    await page.locator('#inspector tbody tr').nth(1).waitFor();
    const cells = await page.locator('#inspector tbody tr').evaluateAll((rows) => rows.length);
    expect(cells).toBe(2);
    expect(await page.locator('#inspector tbody th').allTextContents()).toEqual([
      fleet.name('a'),
      fleet.name('b'),
    ]);
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.getByText('You may not list Workers').waitFor();
    expect(await page.locator('tbody tr').count()).toBe(0);
    await page.context().close();
  });

  it('shows a person who may not drain no drain button, and the API server refuses them with its message', async () => {
    const page = await logIn(bob.token);
    // Other test files' requests may wait too: Bob sees every namespace.
    for (const team of TEAMS)
      await page.locator(`#waiting tr[data-request="${team}/${team}-req"]`).waitFor();
    await page
      .locator('#waiting tr[data-request="team-b/team-b-req"]')
      .getByRole('button', { name: 'Inspect' })
      .click();
    await page.locator('#inspector-title').filter({ hasText: 'team-b-req' }).waitFor();
    await page.locator('#inspector tbody tr').nth(1).waitFor();
    expect(await page.locator('#inspector tbody th').allTextContents()).toEqual([
      'worker-a',
      'worker-b',
    ]);
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.locator(`tr[data-worker="${fleet.name('a')}"]`).waitFor();
    expect(await page.getByRole('button', { name: /^(Drain|Undrain) / }).count()).toBe(0);
    const answer = await page.request.post(
      `${inCluster.server.url}/api/workers/${fleet.name('a')}/undrain`,
      {
        headers: { 'x-simlock-console': '1' },
      },
    );
    expect(answer.status()).toBe(403);
    const body = (await answer.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('FORBIDDEN');
    expect(body.error.message).toContain(`User "${bob.username}" cannot patch resource "workers"`);
    await page.context().close();
  });
});
