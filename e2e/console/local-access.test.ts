// `kubectl simlock console` run by a person with rights in one namespace only (the chart's user
// role bound in team-a, a client certificate of their own), through the real kubectl and the
// plugin, in a real Chromium: they see their namespace's lease at once, the page says what is not
// shown to them and why, and it never says Live while the console's watches fail (here: the API
// server out of reach, then their access taken away while they look).
import { spawn } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../../console/index.js';
import { isAlreadyExists, simlockPath } from '../../runtime/index.js';
import { launchBrowser, type TestBrowser } from '../../test/browser.js';
import { TestFleet, iosStatus } from '../../test/cluster/fleet.js';
import { useCluster } from '../../test/cluster/harness.js';
import { chartPath, helm, parseManifests } from '../../test/cluster/helm.js';
import { certificateIdentity, type TestIdentity } from '../../test/cluster/identities.js';
import { Relay } from '../../test/cluster/relay.js';
import { bindRole } from '../../test/cluster/role-bindings.js';
import { ensureBundles } from '../../test/launch.js';
import { aLeaseRequest, grantedIphone, grantedRequestStatus } from '../../test/fixtures/objects.js';

const cluster = useCluster('console-local');
const bin = fileURLToPath(new URL('../../bin', import.meta.url));
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const teamA = `${cluster.namespace}-team-a`;
const teamB = `${cluster.namespace}-team-b`;
const userRole = `simlock-${cluster.namespace}-user`;
let fleet: TestFleet;
let user: TestIdentity;
let relay: Relay;
/** The user's own kubeconfig, to the API server through the relay. */
let kubeconfig: string;
let testBrowser: TestBrowser;
let browser: Browser;
const consoles: PluginConsole[] = [];

interface PluginConsole {
  url: string;
  /** From the command's start to the URL on its stdout. */
  urlAfterMs: number;
  stderr(): string;
  stop(): Promise<void>;
}

/** `kubectl simlock console --no-open ARGS` as the user, through the real kubectl. */
async function pluginConsole(args: string[], kubeconfigPath = kubeconfig): Promise<PluginConsole> {
  const started = Date.now();
  const child = spawn(
    `${cluster.binDir}/kubectl`,
    ['simlock', 'console', '--no-open', '--simlock-namespace', fleet.namespace, ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        KUBECONFIG: kubeconfigPath,
        PATH: `${bin}:${cluster.binDir}:${process.env.PATH ?? ''}`,
      },
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the console exited with ${code}: ${stderr}`)));
  });
  const running: PluginConsole = {
    url: line.replace(/^simlock console: /, ''),
    urlAfterMs: Date.now() - started,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGINT');
      await exited;
    },
  };
  consoles.push(running);
  return running;
}

async function open(url: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(url);
  await page.getByRole('heading', { name: 'Requests' }).waitFor();
  return page;
}

/** The header's word on the console's connection to the cluster. */
const connection = (page: Page) => page.locator('header [role="status"]');
const live = (page: Page) => connection(page).filter({ hasText: '● Live' }).waitFor();

/** A request granted as the controller writes it (no controller runs here): its lease is shown. */
async function grantedLease(namespace: string, name: string): Promise<void> {
  await cluster.admin.create(
    simlockPath('leaseRequest', { namespace }),
    aLeaseRequest(name)
      .ios('iPhone 16')
      .spec({ holder: `${name}-ci` })
      .obj(),
  );
  await cluster.admin.patch(
    simlockPath('leaseRequest', { namespace, name, subresource: 'status' }),
    {
      status: grantedRequestStatus({
        worker: fleet.name('a'),
        device: grantedIphone({ id: `${name}-sim` }),
        lease: { name },
      }),
    },
  );
}

/** The chart's user role, bound to the user in team-a only (as docs/INSTALL.md tells). */
async function bindUser(): Promise<void> {
  await bindRole(cluster.admin, {
    name: 'simlock-user',
    namespace: teamA,
    role: userRole,
    subjects: [{ kind: 'User', name: user.username }],
  });
}

beforeAll(async () => {
  // Built before the clock runs: the test times the console's own start, not a build.
  await Promise.all([ensureConsoleBuilt(() => undefined), ensureBundles()]);
  testBrowser = await launchBrowser();
  browser = testBrowser.browser;
  fleet = await TestFleet.create(cluster);
  await fleet.addWorker('a', { label: 'worker-a', status: iosStatus() });
  for (const name of [teamA, teamB]) {
    try {
      await cluster.admin.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name },
      });
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
  const rendered = await helm([
    ...['template', 'simlock', chartPath, '-n', cluster.namespace],
    ...['--set', `fullnameOverride=simlock-${cluster.namespace}`],
  ]);
  expect(rendered.exitCode, rendered.stderr).toBe(0);
  const role = parseManifests(rendered.stdout).find(
    (object) => object.kind === 'ClusterRole' && object.metadata.name === userRole,
  );
  expect(role).toBeDefined();
  await cluster.admin.create(`${RBAC}/clusterroles`, role);
  user = await certificateIdentity(`${cluster.namespace}-ta-user`);
  await bindUser();
  await grantedLease(teamA, 'ta-1');
  await grantedLease(teamB, 'tb-1');
  relay = await Relay.start(Number(new URL(cluster.admin.server).port));
  kubeconfig = await relay.kubeconfigThrough(user.kubeconfigPath);
}, 180_000);

afterAll(async () => {
  for (const running of consoles) await running.stop();
  await testBrowser?.close();
  await relay?.close();
  await cluster.admin.delete(`${RBAC}/clusterroles/${userRole}`).catch(() => undefined);
  await fleet?.cleanup();
});

describe('kubectl simlock console for a person with rights in one namespace', () => {
  it('shows their lease at once, and says the fleet and the other namespaces are not shown and why', async () => {
    const running = await pluginConsole(['-n', teamA]);
    const page = await open(running.url);
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    await page.locator(`#leases tr[data-lease="${teamA}/ta-1"]`).waitFor();
    expect(await page.locator('#leases tbody tr').count()).toBe(1);
    await live(page);
    const hidden = page.locator('#hidden');
    await expect(hidden.textContent()).resolves.toMatch(
      /You may not list workers\.simlock\.dev: the fleet is not shown\./,
    );
    await expect(hidden.textContent()).resolves.toContain(`Only namespace ${teamA} is shown`);
    await page.getByRole('link', { name: 'Fleet', exact: true }).click();
    await page.getByText('You may not list Workers: the fleet is not shown to you.').waitFor();
    // Before the fix the URL came only after 30 s: the console waited on watches it may not make.
    expect(running.urlAfterMs).toBeLessThan(10_000);
    expect(running.stderr()).not.toContain('forbidden');
    await page.context().close();
  });

  it('without -n shows the namespace of their kubeconfig’s context, and says why only that one', async () => {
    const inTeamA = `${kubeconfig}.team-a`;
    await copyFile(kubeconfig, inTeamA);
    const set = await cluster.kubectl(
      ['config', 'set-context', '--current', `--namespace=${teamA}`],
      {
        kubeconfig: inTeamA,
      },
    );
    expect(set.exitCode, set.stderr).toBe(0);
    const running = await pluginConsole([], inTeamA);
    const page = await open(running.url);
    await page.getByRole('link', { name: 'Leases', exact: true }).click();
    await page.locator(`#leases tr[data-lease="${teamA}/ta-1"]`).waitFor();
    expect(await page.locator('#leases tbody tr').count()).toBe(1);
    await expect(page.locator('#hidden').textContent()).resolves.toContain(
      `You may not list leaserequests.simlock.dev in all namespaces: only namespace ${teamA} is shown.`,
    );
    await page.context().close();
    await running.stop();
  });

  it('does not say Live while its watches fail: the API server out of reach, then their access gone', async () => {
    const running = await pluginConsole(['-n', teamA]);
    const page = await open(running.url);
    await live(page);

    await relay.refuse();
    await connection(page).filter({ hasText: 'Not live' }).waitFor();
    await page.locator('#failing').filter({ hasText: 'ECONNREFUSED' }).waitFor();

    await cluster.admin.delete(`${RBAC}/namespaces/${teamA}/rolebindings/simlock-user`);
    await relay.reopen();
    await page
      .locator('#failing')
      .filter({ hasText: `leaserequests.simlock.dev is forbidden: User "${user.username}"` })
      .waitFor();
    expect(await connection(page).textContent()).toContain('Not live');

    await bindUser();
    await live(page);
    expect(await page.locator('#failing').count()).toBe(0);
    await page.context().close();
  });
});
