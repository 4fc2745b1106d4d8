// The console's Attention page in a real Chromium, live: what needs a person, each with the command
// that fixes it. The controller in-process, the test playing the agents (test/cluster/fleet.ts):
// a worker drained (over the threshold), a lease its controller says expires soon, a request
// waiting, a host at its RAM budget; then, with the page open and never reloaded, a worker's
// heartbeat lapses and a device is quarantined in its Worker's status, and their rows appear; the
// row's Unquarantine writes what `kubectl simlock device unquarantine` writes. Takes the
// screenshot of docs/CONSOLE.md when SIMLOCK_SCREENSHOTS is set.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerObject, type Device } from '../../api/index.js';
import type { Reconciler } from '../../controller/index.js';
import { simlockPath } from '../../runtime/index.js';
import { controllerFor } from '../../test/cluster/controller.js';
import { TestFleet, iosFullStatus, iosStatus } from '../../test/cluster/fleet.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { iphoneSimulator } from '../../test/fixtures/workers.js';
import { localConsole, shoot } from './console-page.js';

const cluster = useCluster('console-attention');
const live = localConsole(cluster);
let fleet: TestFleet;
let controller: Reconciler;
let page: Page;

const simulator = (id: string, extra: Partial<Device> = {}): Device =>
  iphoneSimulator(id, { name: `iPhone 16 (${id})`, ...extra });
/** worker-a at its iOS limit and its RAM budget, with one device leased. */
const fullAtBudget = (devices: Device[]) =>
  iosFullStatus({
    capacity: {
      global: { limit: 4, running: 2, evictable: 0 },
      platforms: { ios: { limit: 2, running: 2, evictable: 0, atRamBudget: true } },
    },
    devices,
  });

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  // The controller warns an hour before expiry here: a lease of 30 minutes expires soon at once.
  controller = controllerFor(cluster, fleet, { expiringSoonMs: 3_600_000 });
  await Promise.all([live.launch(), controller.start()]);
  await fleet.addWorker('a', { label: 'worker-a', status: iosStatus() });
  await fleet.addWorker('b', { label: 'worker-b', status: iosStatus() });
  await fleet.addWorker('c', { label: 'worker-c', status: iosStatus(), drained: true });
  // Heartbeats that hold however slow the run: only the test's own lapse below takes one away.
  for (const short of ['a', 'b', 'c']) await fleet.heartbeat(short, { durationSeconds: 3600 });
  page = await live.open(fleet.namespace, {
    // Short thresholds, so that a drain and a wait of this test count as long.
    attention: { drainedOverSeconds: 0, waitingOverSeconds: 1 },
  });
}, 120_000);

afterAll(async () => {
  await controller?.stop();
  await fleet?.cleanup();
});

/** The row of one thing on the Attention page, by its key. */
const row = (key: string) => page.locator(`#attention tr[data-attention="${key}"]`);
const cells = async (key: string) =>
  (await row(key).locator('th, td').allTextContents()).map((text) => text.trim());

describe("the console's Attention page", () => {
  it('lists what needs a person with the command that fixes it, and follows the fleet live', async () => {
    // A lease its controller says expires soon, granted on worker-a or worker-b.
    await fleet.createRequest('ci-1', {
      platform: 'ios',
      model: 'iPhone 16',
      holder: 'ci',
      durationSeconds: 1800,
    });
    const granted = await fleet.grant('ci-1');
    const holding = granted.spec.worker;
    const other = holding === fleet.name('a') ? 'b' : 'a';
    const holder = holding === fleet.name('a') ? 'a' : 'b';
    // Both workers full now (the one holding at its RAM budget): a new request waits.
    await fleet.setStatus(holder, fullAtBudget([simulator('sim-1', { state: 'leased' })]));
    await fleet.setStatus(other, iosFullStatus());
    await fleet.createRequest('ci-2', { platform: 'ios', model: 'iPhone 16', holder: 'nightly' });

    await page.getByRole('link', { name: /^Attention/ }).click();
    await page.evaluate('window.simlockMarker = 1');
    const c = fleet.name('c');
    await row(`drained:${c}`).waitFor();
    expect(await cells(`drained:${c}`)).toEqual([
      '✕ Drained',
      'worker-c',
      expect.stringMatching(/^drained for [\dms ]+ at least$/),
      `Undrain it once its work is done:kubectl simlock worker undrain ${c}`,
      'Undrain',
    ]);
    await row(`lease:${fleet.namespace}/ci-1`).waitFor();
    expect(await cells(`lease:${fleet.namespace}/ci-1`)).toEqual([
      '✕ Lease ending',
      'ci-1',
      expect.stringMatching(
        /^expires in 2\dm \d\ds \(holder ci\); lived [\dms ]+ of at most 1d 0h$/,
      ),
      `Extend it if its holder still needs it:kubectl simlock extend ci-1 --by 30m -n ${fleet.namespace}`,
      '',
    ]);
    await row(`waiting:${fleet.namespace}/ci-2`).waitFor();
    expect((await cells(`waiting:${fleet.namespace}/ci-2`)).slice(0, 3)).toEqual([
      '✕ Waiting',
      'ci-2',
      expect.stringMatching(/^waiting for [\dms ]+/),
    ]);
    await row(`ram-budget:${fleet.name(holder)}:ios`).waitFor();

    // worker-b's heartbeat lapses: its agent renewed two minutes ago, for 30 s.
    const b = fleet.name('b');
    expect(await row(`disconnected:${b}`).count()).toBe(0);
    await fleet.heartbeat('b', { ageMs: 120_000, durationSeconds: 30 });
    await row(`disconnected:${b}`).waitFor();
    expect(await cells(`disconnected:${b}`)).toEqual([
      '✕ Not connected',
      'worker-b',
      // The page's clock ticks once a second: about two minutes.
      expect.stringMatching(/^its agent last renewed its heartbeat (1m 5\ds|2m 0\ds) ago$/),
      'Start its agent again or bring its host back on the network; on the host:simlock-agent doctor --config agent.yaml',
      '',
    ]);

    // A device of worker-a is quarantined, its retries used up: it waits for an operator.
    const a = fleet.name('a');
    const since = new Date(Date.now() - 5 * 60_000).toISOString();
    const quarantined = simulator('sim-q', {
      state: 'quarantined',
      quarantine: { reason: 'boot failed: timed out', since, retries: 3 },
    });
    const current = WorkerObject.parse(await cluster.admin.get(simlockPath('worker', { name: a })));
    await fleet.setStatus('a', {
      ...(current.status ?? iosStatus()),
      devices: [...(current.status?.devices ?? []), quarantined],
    });
    const key = `quarantined:${a}:sim-q`;
    await row(key).waitFor();
    expect(await cells(key)).toEqual([
      '✕ Quarantined',
      'iPhone 16 (sim-q) on worker-a',
      expect.stringMatching(
        /^quarantined (4m 5\ds|5m 0\ds): boot failed: timed out · 3 retries failed, waits for an operator$/,
      ),
      `Put it back in service once its cause is fixed:kubectl simlock device unquarantine ${a} sim-q`,
      'Unquarantine',
    ]);
    // The header counts what waits for a person.
    await expect
      .poll(async () => page.getByRole('link', { name: /^Attention/ }).textContent())
      .toMatch(/^Attention \d+$/);
    expect(await page.evaluate<number>('window.simlockMarker')).toBe(1);
    await shoot(page, 'attention');

    await row(key)
      .getByRole('button', { name: 'Unquarantine iPhone 16 (sim-q) on worker-a' })
      .click();
    const worker = await eventually(
      async () => {
        const read = WorkerObject.parse(
          await cluster.admin.get(simlockPath('worker', { name: a })),
        );
        return read.spec.unquarantine?.length ? read : undefined;
      },
      { what: "the Unquarantine entry in the Worker's spec" },
    );
    expect(worker.spec.unquarantine?.map((entry) => entry.device)).toEqual(['sim-q']);
    expect(await page.getByRole('alert').count()).toBe(0);
  });
});
