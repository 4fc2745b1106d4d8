// The chart's admission policies for a lease's lifetime (issue 16, ADR 0008) on the real API
// server: the maximum lease duration (controller.maxLeaseDuration, default 24h) and force release
// (the custom verb force-release, which the operator role has and the user role has not). The
// chart is rendered with the real helm and only those policies, their bindings and the two roles
// are applied; people are client-certificate users, the plugin runs as a process, the controller
// runs in-process and the test plays the agent (TestFleet).
//
// Policies are cluster-scoped while other test files share the control plane: the objects are
// named after this file's namespace (fullnameOverride), and both bindings select only this file's
// fleet namespace (admission.namespaceSelector), so no other file's requests are ever matched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Reconciler } from '../controller/index.js';
import { simlockPath } from '../runtime/index.js';
import { controllerFor } from '../test/cluster/controller.js';
import { iosStatus, TestFleet } from '../test/cluster/fleet.js';
import { kubectlEventsOf } from '../test/cluster/kubectl-events.js';
import { eventually, useCluster, type CommandResult } from '../test/cluster/harness.js';
import { runPlugin } from '../test/cluster/plugin.js';
import { chartPath, helm, parseManifests, type KubeObject } from '../test/cluster/helm.js';
import { certificateIdentity, type TestIdentity } from '../test/cluster/identities.js';
import { bindRole } from '../test/cluster/role-bindings.js';
import { aLeaseRequest } from '../test/fixtures/objects.js';

const cluster = useCluster('admit');
const fullname = `simlock-${cluster.namespace}`;
let fleet: TestFleet;
let reconciler: Reconciler;
let applied: KubeObject[] = [];
let user: TestIdentity;
let operator: TestIdentity;

function simlock(identity: TestIdentity, ...args: string[]): Promise<CommandResult> {
  return runPlugin(identity.kubeconfigPath, fleet.namespace, args);
}

function leaseRequest(name: string, durationSeconds: number) {
  return aLeaseRequest(name).duration(durationSeconds).obj();
}

/**
 * Polls until `attempt` fails with a message matching `message`: a policy takes a moment to be
 * enforced after it is created. An attempt that succeeds meanwhile is undone by `undo` and tried
 * again.
 */
async function refused(
  attempt: () => Promise<CommandResult>,
  message: RegExp,
  undo: () => Promise<unknown>,
): Promise<CommandResult> {
  return eventually(
    async () => {
      const result = await attempt();
      if (result.exitCode === 0) {
        await undo();
        return undefined;
      }
      if (message.test(result.stderr)) return result;
      throw new Error(`refused otherwise: ${result.stderr}`);
    },
    { timeoutMs: 30_000, intervalMs: 250, what: `a refusal matching ${String(message)}` },
  );
}

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  await fleet.addWorker('a', { status: iosStatus() });
  reconciler = controllerFor(cluster, fleet);
  await reconciler.start();
  // Granted before the policies exist (as when the maximum is lowered later): 25 h.
  await fleet.createRequest('from-before', { platform: 'ios', durationSeconds: 90_000 });
  await fleet.grant('from-before', 'sim-from-before');
  await fleet.phase('from-before', 'Granted');

  const rendered = await helm([
    'template',
    'simlock',
    chartPath,
    '--namespace',
    cluster.namespace,
    '--set',
    `fullnameOverride=${fullname}`,
    '--set-json',
    `admission.namespaceSelector=${JSON.stringify({
      matchLabels: { 'kubernetes.io/metadata.name': fleet.namespace },
    })}`,
  ]);
  expect(rendered.stderr).toBe('');
  const wanted = new Set([
    `ValidatingAdmissionPolicy/${fullname}-max-lease-duration`,
    `ValidatingAdmissionPolicyBinding/${fullname}-max-lease-duration`,
    `ValidatingAdmissionPolicy/${fullname}-force-release`,
    `ValidatingAdmissionPolicyBinding/${fullname}-force-release`,
    `ClusterRole/${fullname}-user`,
    `ClusterRole/${fullname}-operator`,
  ]);
  applied = parseManifests(rendered.stdout).filter((object) =>
    wanted.has(`${object.kind}/${object.metadata.name}`),
  );
  expect(applied.map((object) => `${object.kind}/${object.metadata.name}`).sort()).toEqual(
    [...wanted].sort(),
  );
  // Every one accepted by the API server, the policies' CEL compiled and type-checked by it.
  const apply = await cluster.kubectl(['apply', '--server-side', '-f', '-'], {
    input: applied.map((object) => stringify(object)).join('---\n'),
  });
  expect(apply.stderr).toBe('');
  expect(apply.exitCode).toBe(0);

  user = await certificateIdentity(`${cluster.namespace}-user`);
  operator = await certificateIdentity(`${cluster.namespace}-operator`);
  await bindRole(cluster.admin, {
    name: 'simlock-users',
    namespace: fleet.namespace,
    role: `${fullname}-user`,
    subjects: [{ kind: 'User', name: user.username }],
  });
  // Operators are bound cluster-wide, as the chart's NOTES say (Workers are cluster-scoped).
  await bindRole(cluster.admin, {
    name: `${fullname}-operators`,
    role: `${fullname}-operator`,
    subjects: [{ kind: 'User', name: operator.username }],
  });
}, 60_000);

afterAll(async () => {
  await reconciler.stop();
  await fleet.cleanup();
  await cluster.admin
    .delete(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${fullname}-operators`)
    .catch(() => undefined);
  await cluster.kubectl(['delete', '--ignore-not-found', '-f', '-'], {
    input: applied.map((object) => stringify(object)).join('---\n'),
  });
});

const requestPath = (name: string) =>
  simlockPath('leaseRequest', { namespace: fleet.namespace, name });

/** A request of `user`'s, granted by the test's worker. */
async function granted(name: string, durationSeconds: number): Promise<void> {
  await user.client.create(
    simlockPath('leaseRequest', { namespace: fleet.namespace }),
    leaseRequest(name, durationSeconds),
  );
  await fleet.grant(name, `sim-${name}`);
  await fleet.phase(name, 'Granted');
}

describe('the maximum lease duration (controller.maxLeaseDuration, 24h by default)', () => {
  it('refuses a request for longer, naming spec.durationSeconds; 24h itself is accepted', async () => {
    // 25 h: within the CRD's own bound (7 days), so only the policy can refuse it.
    const tooLong = await refused(
      () =>
        cluster.kubectl(['create', '-n', fleet.namespace, '-f', '-'], {
          kubeconfig: user.kubeconfigPath,
          input: stringify(leaseRequest('too-long', 90_000)),
        }),
      /max-lease-duration/,
      () => cluster.admin.delete(requestPath('too-long')),
    );
    expect(tooLong.stderr).toContain(
      'spec.durationSeconds: Invalid value: 90000: a lease lives at most 24h',
    );
    const atMost = await cluster.kubectl(['create', '-n', fleet.namespace, '-f', '-'], {
      kubeconfig: user.kubeconfigPath,
      input: stringify(leaseRequest('a-day', 86_400)),
    });
    expect(atMost.stderr).toBe('');
    expect(atMost.stdout).toBe('leaserequest.simlock.dev/a-day created\n');
    await cluster.admin.delete(requestPath('a-day'));
  });

  it('still lets a lease granted for longer before the policy be released', async () => {
    // The policy judges a duration set or changed, not every write to the request: the
    // controller's own writes (the finalizer it takes off at the release) must not be refused, or
    // the lease would never end.
    const released = await simlock(user, 'release', 'from-before', '--timeout', '10s');
    expect(released.stderr).toBe('');
    expect(released.exitCode).toBe(0);
    await fleet.requestGone('from-before');
  });

  it('refuses an extension past it (kubectl simlock extend), naming the field; within it, extends', async () => {
    await granted('extended', 82_800); // 23 h
    const past = await refused(
      () => simlock(user, 'extend', 'extended', '--by', '2h'),
      /max-lease-duration/,
      () => Promise.resolve(),
    );
    expect(past.stderr).toContain(
      'spec.durationSeconds: Invalid value: 90000: a lease lives at most 24h',
    );
    expect((await fleet.request('extended')).status?.phase).toBe('Granted');
    const within = await simlock(user, 'extend', 'extended', '--by', '30m');
    expect(within.stderr).toBe('');
    expect(within.stdout).toMatch(/^Lease extended extended to \S+Z\n$/);
    const request = (await cluster.admin.get(requestPath('extended'))) as {
      spec: { durationSeconds: number };
    };
    expect(request.spec.durationSeconds).toBe(84_600);
    await simlock(user, 'release', 'extended');
  });
});

describe('release --force (the verb force-release)', () => {
  it('is refused for a simlock-user, even on their own lease', async () => {
    await granted('mine', 3600);
    const forced = await refused(
      () => simlock(user, 'release', '--force', 'mine'),
      /force-release/,
      // Accepted before the policy was enforced: a new request to try again on.
      async () => {
        await cluster.admin.delete(requestPath('mine'));
        await fleet.requestGone('mine');
        await granted('mine', 3600);
      },
    );
    expect(forced.stderr).toContain(
      `${user.username} may not force-release leaserequests in ${fleet.namespace} (the verb force-release; the operator role has it)`,
    );
    // Nothing was written: the lease is held, with no force-release annotation.
    const request = (await cluster.admin.get(requestPath('mine'))) as {
      metadata: { annotations?: Record<string, string> };
      status: { phase: string };
    };
    expect(request.status.phase).toBe('Granted');
    expect(request.metadata.annotations?.['simlock.dev/force-release-by']).toBeUndefined();
    // Nor may anyone set it under another's name, an operator included.
    const impersonated = await operator.client
      .patch(requestPath('mine'), {
        metadata: { annotations: { 'simlock.dev/force-release-by': user.username } },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(String(impersonated)).toContain(
      `simlock.dev/force-release-by must name who sets it (${operator.username})`,
    );
  });

  it('works for an operator, and its Event names the operator', async () => {
    const forced = await simlock(operator, 'release', '--force', 'mine');
    expect(forced.stderr).toBe('');
    expect(forced.stdout).toBe('Lease mine force-released\n');
    const events = await kubectlEventsOf(cluster, fleet.namespace, 'mine');
    expect(events.stdout).toMatch(
      new RegExp(
        `ForceReleased\\s+leaserequest/mine\\s+Released: force-released by ${operator.username}`,
      ),
    );
  });
});
