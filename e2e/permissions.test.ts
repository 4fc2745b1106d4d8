// The permissions the controller and the proxy check at startup (controller/permissions.ts,
// proxy/permissions.ts) against the chart's roles, installed with the real helm and answered by
// the real API server's RBAC authorizer: the chart grants every one, cluster-wide and with
// controller.watchNamespace, so the lists and the chart cannot drift apart. Then the real
// processes, under the chart's ServiceAccounts with one verb taken away, refuse to start with a
// line naming it, as a pod's logs show it.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controllerPermissions } from '../controller/index.js';
import { proxyPermissions } from '../proxy/index.js';
import { checkPermissions, describePermission, silentLogger } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { chartPath, helm } from '../test/cluster/helm.js';
import { serviceAccountIdentity, type TestIdentity } from '../test/cluster/identities.js';
import { launchArgs } from '../test/launch.js';
import { freePort } from '../tools/controlplane/start.js';

const cluster = useCluster('perm');
const namespace = cluster.namespace;
// A second release that watches one namespace: its namespaced rules are a Role there.
const scopedNamespace = `${namespace}-scoped`;
const watchedNamespace = `${namespace}-watched`;
// Cluster-scoped objects of the chart (ClusterRoles) carry this file's namespace in their names.
const fullname = `simlock-${namespace}`;
const scopedFullname = `simlock-${scopedNamespace}`;

/** The chart's RBAC only: no admission policies or people's roles, which are cluster-wide. */
const install = (release: string, into: string, name: string, extra: string[] = []) =>
  helm([
    'install',
    release,
    chartPath,
    '--namespace',
    into,
    '--skip-crds',
    '--set',
    `fullnameOverride=${name},admission.enabled=false,rbac.userRoles=false`,
    ...extra,
  ]);

let controller: TestIdentity;
let proxy: TestIdentity;

beforeAll(async () => {
  for (const name of [scopedNamespace, watchedNamespace]) {
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
  }
  const installed = await Promise.all([
    install('simlock', namespace, fullname),
    install('simlock', scopedNamespace, scopedFullname, [
      '--set',
      `controller.watchNamespace=${watchedNamespace}`,
    ]),
  ]);
  for (const result of installed) expect(result.stderr + result.stdout).not.toContain('Error');
  for (const result of installed) expect(result.exitCode).toBe(0);
  controller = await serviceAccountIdentity(cluster.admin, namespace, `${fullname}-controller`);
  proxy = await serviceAccountIdentity(cluster.admin, namespace, `${fullname}-proxy`);
});

afterAll(async () => {
  await helm(['uninstall', 'simlock', '--namespace', namespace]);
  await helm(['uninstall', 'simlock', '--namespace', scopedNamespace]);
  for (const name of [scopedNamespace, watchedNamespace])
    await cluster.admin.delete(`/api/v1/namespaces/${name}`).catch(() => undefined);
});

const missing = async (
  identity: TestIdentity,
  permissions: Parameters<typeof checkPermissions>[1],
) => {
  const check = await checkPermissions(identity.client, permissions, silentLogger);
  if (!check.checked) throw new Error(`the check could not be made: ${check.reason}`);
  return check.missing.map(describePermission);
};

/** Runs a process to its end (or 20 s): its exit code and what it printed on stderr. */
function runToExit(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SIMLOCK_LOG_LEVEL: 'warn' },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** A ClusterRole of the release without `verb` in the rule for `resource`. */
async function takeAway(role: string, resource: string, verb: string): Promise<void> {
  const path = `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role}`;
  const current = (await cluster.admin.get(path)) as {
    rules: { resources?: string[]; verbs: string[] }[];
  };
  const index = current.rules.findIndex(
    (rule) => rule.resources?.includes(resource) && rule.verbs.includes(verb),
  );
  expect(index).toBeGreaterThanOrEqual(0);
  const verbs = current.rules[index]?.verbs.filter((each) => each !== verb) ?? [];
  await cluster.admin.patch(
    path,
    verbs.length > 0
      ? [{ op: 'replace', path: `/rules/${index}/verbs`, value: verbs }]
      : [{ op: 'remove', path: `/rules/${index}` }],
    'json',
  );
}

describe("the chart's roles", () => {
  it('grant the controller every permission it checks at startup, cluster-wide and for one watched namespace', async () => {
    expect(
      await missing(
        controller,
        controllerPermissions({ systemNamespace: namespace, leaderElection: true }),
      ),
    ).toEqual([]);
    const scoped = await serviceAccountIdentity(
      cluster.admin,
      scopedNamespace,
      `${scopedFullname}-controller`,
    );
    const permissions = controllerPermissions({
      systemNamespace: scopedNamespace,
      watchNamespace: watchedNamespace,
      leaderElection: true,
    });
    expect(await missing(scoped, permissions)).toEqual([]);
    // The Role there is all it has: requests of other namespaces are not its to see.
    const elsewhere = permissions.map((permission) =>
      permission.namespace === watchedNamespace ? { ...permission, namespace } : permission,
    );
    expect(await missing(scoped, elsewhere)).toContain(
      `list leaserequests in API group "simlock.dev" in namespace "${namespace}" (the requests)`,
    );
  });

  it('grant the proxy every permission it checks at startup', async () => {
    expect(await missing(proxy, proxyPermissions())).toEqual([]);
  });
});

describe('a process short of one permission', () => {
  it('the controller without list on leaserequests refuses to start, naming it', async () => {
    await takeAway(`${fullname}-controller`, 'leaserequests', 'list');
    const permissions = controllerPermissions({ systemNamespace: namespace, leaderElection: true });
    // The RBAC authorizer sees the change from its informer, a moment later.
    await eventually(
      async () => ((await missing(controller, permissions)).length ? true : undefined),
      {
        what: 'list leaserequests refused',
      },
    );
    const started = Date.now();
    const { code, stderr } = await runToExit(
      launchArgs('controller', [
        '--kubeconfig',
        controller.kubeconfigPath,
        '--namespace',
        namespace,
        '--listen',
        `127.0.0.1:${await freePort()}`,
      ]),
    );
    expect(code).toBe(1);
    expect(stderr).toContain(
      'simlock-controller: missing permission: list leaserequests in API group "simlock.dev" in all namespaces (the requests)\n',
    );
    expect(stderr).toContain(
      `simlock-controller: 1 of ${permissions.length} permissions missing for system:serviceaccount:${namespace}:${fullname}-controller; grant them`,
    );
    // It stops at once: no forbidden list retried, no leader election begun.
    expect(stderr).not.toMatch(/forbidden/i);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the proxy without create on tokenreviews refuses to start, naming it', async () => {
    await takeAway(`${fullname}-proxy`, 'tokenreviews', 'create');
    await eventually(
      async () => ((await missing(proxy, proxyPermissions())).length ? true : undefined),
      {
        what: 'create tokenreviews refused',
      },
    );
    const { code, stderr } = await runToExit(
      launchArgs('proxy', [
        '--kubeconfig',
        proxy.kubeconfigPath,
        '--listen',
        `127.0.0.1:${await freePort()}`,
      ]),
    );
    expect(code).toBe(1);
    expect(stderr).toContain(
      'simlock-proxy: missing permission: create tokenreviews in API group "authentication.k8s.io" in all namespaces (who is calling)\n',
    );
    expect(stderr).toContain(
      `simlock-proxy: 1 of ${proxyPermissions().length} permissions missing for system:serviceaccount:${namespace}:${fullname}-proxy`,
    );
  });
});
