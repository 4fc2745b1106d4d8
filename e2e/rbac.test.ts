// The chart's RBAC and admission policies, installed with the real helm and exercised with real
// identities against the real API server: agents with a client certificate (CN simlock:agent:<w>,
// O simlock:agents) and with a ServiceAccount token (worker-<w>), a simlock-user, another user who
// was granted status writes, and the controller's ServiceAccount. Refusals come from the API
// server, with the policy's own message. Last, the real controller and agent processes, each with
// only its chart identity, serve a request from start to release without one refused write.
//
// The policies are cluster-wide objects while other test files share the cluster: members of
// system:masters (every other file's admin) are exempt, the namespaced policies cover only this
// file's namespaces, and the agent identities here are this file's alone.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heartbeatLeaseName, LEASE_FINALIZER, WORKER_LABEL } from '../api/index.js';
import {
  coordinationLease,
  coordinationLeasePath,
  KubeApiError,
  microTime,
  simlockPath,
} from '../runtime/index.js';
import { iosSimulatorScript, startAgent, type AgentProcess } from '../test/cluster/agents.js';
import { FLEET_LABEL } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { chartPath, helm } from '../test/cluster/helm.js';
import { bindRole, createRole } from '../test/cluster/role-bindings.js';
import { launchArgs } from '../test/launch.js';
import { freePort } from '../tools/controlplane/start.js';
import {
  certificateIdentity,
  serviceAccountIdentity,
  type TestIdentity,
} from '../test/cluster/identities.js';
import { aLease, aLeaseRequest, aWorkerObject } from '../test/fixtures/objects.js';

const cluster = useCluster('rbac');
const namespace = cluster.namespace;
const otherNamespace = `${namespace}-other`;
const fullname = `simlock-${namespace}`;
// Workers are cluster-scoped: their names carry this file's namespace.
const workerA = `${namespace}-a`; // its agent has a client certificate
const workerB = `${namespace}-b`; // its agent has a ServiceAccount token
const workerC = `${namespace}-c`; // a real agent process, with a ServiceAccount token

let agentA: TestIdentity;
let agentB: TestIdentity;
let impostor: TestIdentity;
let user: TestIdentity;
let statusWriter: TestIdentity;
let controller: TestIdentity;

const workerPath = (name: string, subresource?: 'status') =>
  simlockPath('worker', { name, ...(subresource ? { subresource } : {}) });
const leasePath = (name: string, subresource?: 'status') =>
  simlockPath('lease', { namespace, name, ...(subresource ? { subresource } : {}) });
const requestPath = (name: string, subresource?: 'status') =>
  simlockPath('leaseRequest', { namespace, name, ...(subresource ? { subresource } : {}) });

const workerStatus = { protocol: 1, agentVersion: '0.1.0-test', health: 'running' };

function heartbeat(name: string) {
  return coordinationLease(
    { name, namespace },
    { holderIdentity: name, leaseDurationSeconds: 30, renewTime: microTime(Date.now()) },
  );
}

async function refusal(write: () => Promise<unknown>): Promise<KubeApiError> {
  try {
    await write();
  } catch (error) {
    if (error instanceof KubeApiError) return error;
    throw error;
  }
  throw new Error('the API server accepted the write');
}

/**
 * Polls until the API server refuses `write` with a message containing `message`: an admission
 * policy takes a moment to become active after it is created. A write accepted meanwhile is
 * simply tried again, so `write` must be repeatable.
 */
async function refusedByPolicy(
  write: () => Promise<unknown>,
  message: string,
): Promise<KubeApiError> {
  return eventually(
    async () => {
      const error = await refusal(write).catch(() => undefined);
      if (error === undefined) return undefined;
      if (error.status === 403 && error.message.includes(message)) return error;
      throw error;
    },
    { timeoutMs: 30_000, intervalMs: 250, what: `a refusal saying "${message}"` },
  );
}

/** Refused by RBAC: the identity holds no role that allows it. */
async function forbiddenByRbac(write: () => Promise<unknown>, what: RegExp): Promise<void> {
  const error = await refusal(write);
  expect(error.status).toBe(403);
  expect(error.message).toMatch(what);
  expect(error.message).not.toContain('ValidatingAdmissionPolicy');
}

beforeAll(async () => {
  const { admin } = cluster;
  await admin.create('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: otherNamespace },
  });
  const install = await helm([
    'install',
    'simlock',
    chartPath,
    '--namespace',
    namespace,
    '--skip-crds',
    '--set',
    `fullnameOverride=${fullname},agents.serviceAccounts={${workerB},${workerC}}`,
    '--set-json',
    `admission.namespaceSelector=${JSON.stringify({
      matchExpressions: [
        { key: 'kubernetes.io/metadata.name', operator: 'In', values: [namespace, otherNamespace] },
      ],
    })}`,
  ]);
  expect(install.stderr).toBe('');
  expect(install.exitCode).toBe(0);

  agentA = await certificateIdentity(`simlock:agent:${workerA}`, ['simlock:agents']);
  agentB = await serviceAccountIdentity(admin, namespace, `worker-${workerB}`);
  impostor = await certificateIdentity(`${namespace}-impostor`, ['simlock:agents']);
  controller = await serviceAccountIdentity(admin, namespace, `${fullname}-controller`);
  user = await certificateIdentity(`${namespace}-user`);
  statusWriter = await certificateIdentity(`${namespace}-status-writer`);

  // A simlock user of this namespace only.
  await bindRole(admin, {
    name: 'simlock-users',
    namespace,
    role: `${fullname}-user`,
    subjects: [{ kind: 'User', name: user.username }],
  });
  // Someone RBAC lets write request status, to show that the policy, not RBAC, refuses them.
  await createRole(admin, {
    name: 'request-status-writer',
    namespace,
    rules: [{ apiGroups: ['simlock.dev'], resources: ['leaserequests/status'], verbs: ['patch'] }],
  });
  await bindRole(admin, {
    name: 'request-status-writer',
    namespace,
    role: 'request-status-writer',
    roleKind: 'Role',
    subjects: [{ kind: 'User', name: statusWriter.username }],
  });
});

afterAll(async () => {
  await helm(['uninstall', 'simlock', '--namespace', namespace]);
  for (const name of [workerA, workerB, workerC])
    await cluster.admin.delete(workerPath(name)).catch(() => undefined);
  await cluster.admin.delete(`/api/v1/namespaces/${otherNamespace}`).catch(() => undefined);
});

describe('agents', () => {
  it('create their own Worker and no other', async () => {
    const error = await refusedByPolicy(
      // Accepted before the policy is active: removed, so the next try creates it again.
      async () => {
        await agentA.client.create(simlockPath('worker'), aWorkerObject(workerB).obj());
        await cluster.admin.delete(workerPath(workerB));
      },
      `the agent of worker ${workerA} may write only its own Worker, not ${workerB}`,
    );
    // Refused by the API server itself. Another test file's release may have the same policy for
    // certificate agents, with the same rule and message: either may be the one that answers.
    expect(error.message).toMatch(
      /ValidatingAdmissionPolicy 'simlock-[a-z0-9-]+-agent-own-worker'/,
    );
    await agentA.client.create(simlockPath('worker'), aWorkerObject(workerA).obj());
    await agentB.client.create(simlockPath('worker'), aWorkerObject(workerB).obj());
  });

  it('write their own Worker and its status, not another agent’s', async () => {
    await refusedByPolicy(
      () => agentA.client.patch(workerPath(workerB), { spec: { label: 'taken over' } }),
      `the agent of worker ${workerA} may write only its own Worker, not ${workerB}`,
    );
    await refusedByPolicy(
      () => agentA.client.patch(workerPath(workerB, 'status'), { status: workerStatus }),
      `the agent of worker ${workerA} may write only its own Worker, not ${workerB}`,
    );
    // The ServiceAccount identity is held to the same rule.
    await refusedByPolicy(
      () => agentB.client.patch(workerPath(workerA, 'status'), { status: workerStatus }),
      `the agent of worker ${workerB} may write only its own Worker, not ${workerA}`,
    );

    await agentA.client.patch(workerPath(workerA, 'status'), { status: workerStatus });
    await agentA.client.patch(workerPath(workerA), { spec: { label: 'mac mini 1' } });
    await agentB.client.patch(workerPath(workerB, 'status'), { status: workerStatus });
    const read = (await cluster.admin.get(workerPath(workerA))) as {
      spec: { label?: string };
      status?: { health?: string };
    };
    expect(read.spec.label).toBe('mac mini 1');
    expect(read.status?.health).toBe('running');
  });

  it('may not undo an operator’s drain', async () => {
    await refusedByPolicy(async () => {
      await cluster.admin.patch(workerPath(workerA), { spec: { drained: true } });
      await agentA.client.patch(workerPath(workerA), { spec: { drained: false } });
    }, 'an agent may not drain or undrain its Worker');
    // Its other spec fields stay its own.
    await agentA.client.patch(workerPath(workerA), { spec: { label: 'mac mini 1, drained' } });
  });

  it('write nothing when in the agents group under a name that names no worker', async () => {
    await refusedByPolicy(
      () => impostor.client.patch(workerPath(workerA, 'status'), { status: workerStatus }),
      `${impostor.username} is in group simlock:agents but is not named simlock:agent:<worker>`,
    );
  });

  it('answer only the Leases dispatched to them, status and finalizer alike', async () => {
    for (const [name, target] of [
      ['lease-a', workerA],
      ['lease-b', workerB],
    ] as const) {
      await cluster.admin.create(
        simlockPath('lease', { namespace }),
        aLease(name)
          .label(WORKER_LABEL, target)
          .finalizer(LEASE_FINALIZER)
          .worker(target)
          .expiresAt('2030-01-01T00:00:00Z')
          .obj(),
      );
    }
    const notYours = `the agent of worker ${workerA} may write only the Leases dispatched to it, not ${namespace}/lease-b`;
    await refusedByPolicy(
      () => agentA.client.patch(leasePath('lease-b', 'status'), { status: { phase: 'Pending' } }),
      notYours,
    );
    await refusedByPolicy(
      () => agentA.client.patch(leasePath('lease-b'), { metadata: { finalizers: [] } }),
      notYours,
    );
    await refusedByPolicy(
      () => agentB.client.patch(leasePath('lease-a', 'status'), { status: { phase: 'Pending' } }),
      `the agent of worker ${workerB} may write only the Leases dispatched to it, not ${namespace}/lease-a`,
    );

    // Its own: found by label across namespaces, answered, and let go once reclaimed.
    const listed = (await agentA.client.get(simlockPath('lease'), {
      query: { labelSelector: `${WORKER_LABEL}=${workerA}` },
    })) as { items: { metadata: { name: string } }[] };
    expect(listed.items.map((lease) => lease.metadata.name)).toEqual(['lease-a']);
    await agentA.client.patch(leasePath('lease-a', 'status'), { status: { phase: 'Pending' } });
    await cluster.admin.delete(leasePath('lease-a'));
    await agentA.client.patch(leasePath('lease-a'), { metadata: { finalizers: [] } });
    await eventually(() =>
      cluster.admin.get(leasePath('lease-a')).then(
        () => undefined,
        (error: unknown) => (error instanceof KubeApiError && error.status === 404) || undefined,
      ),
    );
    await cluster.admin.patch(leasePath('lease-b'), { metadata: { finalizers: [] } });
    await cluster.admin.delete(leasePath('lease-b'));
  });

  it('renew only their own heartbeat Lease', async () => {
    const heartbeats = coordinationLeasePath(namespace);
    await agentB.client.create(heartbeats, heartbeat(heartbeatLeaseName(workerB)));
    await refusedByPolicy(
      () =>
        agentA.client.patch(coordinationLeasePath(namespace, heartbeatLeaseName(workerB)), {
          spec: { renewTime: microTime(Date.now()) },
        }),
      `may renew only its heartbeat worker-${workerA}, not worker-${workerB}`,
    );
    await agentA.client.create(heartbeats, heartbeat(heartbeatLeaseName(workerA)));
    await agentA.client.patch(coordinationLeasePath(namespace, heartbeatLeaseName(workerA)), {
      spec: { renewTime: microTime(Date.now()) },
    });
  });

  it('may not request devices, delete Workers, or write outside the simlock namespace', async () => {
    await forbiddenByRbac(
      () =>
        agentA.client.create(
          simlockPath('leaseRequest', { namespace }),
          aLeaseRequest('from-an-agent').obj(),
        ),
      /cannot create resource "leaserequests"/,
    );
    await forbiddenByRbac(
      () => agentA.client.delete(workerPath(workerA)),
      /cannot delete resource "workers"/,
    );
    await forbiddenByRbac(
      () =>
        agentA.client.create(
          coordinationLeasePath(otherNamespace),
          heartbeat(heartbeatLeaseName(workerA)),
        ),
      /cannot create resource "leases" in API group "coordination.k8s.io"/,
    );
  });
});

describe('people and the controller', () => {
  it('a simlock-user requests devices in its namespace and not in another', async () => {
    const request = (name: string) => aLeaseRequest(name).obj();
    await user.client.create(simlockPath('leaseRequest', { namespace }), request('mine'));
    await user.client.get(requestPath('mine'));
    await user.client.get(simlockPath('lease', { namespace }));
    await forbiddenByRbac(
      () =>
        user.client.create(
          simlockPath('leaseRequest', { namespace: otherNamespace }),
          request('elsewhere'),
        ),
      new RegExp(`cannot create resource "leaserequests".* in the namespace "${otherNamespace}"`),
    );
  });

  it('only the controller writes LeaseRequest status', async () => {
    await cluster.admin.create(
      simlockPath('leaseRequest', { namespace }),
      aLeaseRequest('status-owner').android().obj(),
    );
    const status = { status: { phase: 'Waiting' } };
    // RBAC would let this user write it; the policy refuses.
    await refusedByPolicy(
      () => statusWriter.client.patch(requestPath('status-owner', 'status'), status),
      `only the simlock controller (system:serviceaccount:${namespace}:${fullname}-controller) writes LeaseRequest status, not ${statusWriter.username}`,
    );
    await forbiddenByRbac(
      () => user.client.patch(requestPath('status-owner', 'status'), status),
      /cannot patch resource "leaserequests\/status"/,
    );
    await forbiddenByRbac(
      () => agentA.client.patch(requestPath('status-owner', 'status'), status),
      /cannot patch resource "leaserequests\/status"/,
    );

    await controller.client.patch(requestPath('status-owner', 'status'), status);
    // Cluster admins are exempt: test harnesses and break-glass write status as system:masters.
    await cluster.admin.patch(requestPath('status-owner', 'status'), {
      status: { phase: 'Pending' },
    });
    const read = (await cluster.admin.get(requestPath('status-owner'))) as {
      status?: { phase?: string };
    };
    expect(read.status?.phase).toBe('Pending');
  });
});

describe('the controller and an agent, each with only its chart identity', () => {
  const children: { kill(): Promise<void> }[] = [];
  // The controller's warnings: a write refused by RBAC or a policy would show here.
  let controllerOutput = '';
  afterAll(async () => {
    await Promise.all(children.map((child) => child.kill()));
  });

  function startController(kubeconfigPath: string, port: number): ChildProcess {
    const child = spawn(
      process.execPath,
      [
        ...launchArgs('controller'),
        '--kubeconfig',
        kubeconfigPath,
        '--namespace',
        namespace,
        '--watch-namespace',
        namespace,
        // Only this test's agent: Workers A and B above have no fleet label.
        '--worker-selector',
        `${FLEET_LABEL}=${namespace}`,
        '--listen',
        `127.0.0.1:${port}`,
        '--identity',
        'rbac-test-controller',
        '--reason-write-interval-ms',
        '100',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SIMLOCK_LOG_LEVEL: 'warn' } },
    );
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      controllerOutput = (controllerOutput + chunk).slice(-20_000);
    });
    children.push({
      kill: () =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 5000).unref();
        }),
    });
    return child;
  }

  it('lease a device for a simlock-user and release it, with no write refused', async () => {
    // The requests of the tests above have no controller finalizer: they go at once.
    for (const name of ['mine', 'status-owner'])
      await cluster.admin.delete(requestPath(name)).catch(() => undefined);

    const agentIdentity = await serviceAccountIdentity(
      cluster.admin,
      namespace,
      `worker-${workerC}`,
    );
    const agent: AgentProcess = await startAgent({
      admin: cluster.admin,
      kubeconfigPath: agentIdentity.kubeconfigPath,
      name: workerC,
      namespace,
      fleet: namespace,
      script: iosSimulatorScript(),
    });
    children.push({ kill: () => agent.kill('SIGKILL') });
    // The agent reports its Worker running before its first heartbeat lands: wait for that too.
    await eventually(
      () =>
        cluster.admin
          .get(coordinationLeasePath(namespace, heartbeatLeaseName(workerC)))
          .catch(() => undefined),
      { timeoutMs: 20_000, what: `the heartbeat Lease of ${workerC}` },
    );

    const controllerProcess = startController(controller.kubeconfigPath, await freePort());
    await user.client.create(
      simlockPath('leaseRequest', { namespace }),
      aLeaseRequest('end-to-end').ios('iPhone 16').obj(),
    );
    const granted = await eventually(
      async () => {
        if (controllerProcess.exitCode !== null) throw new Error('the controller exited');
        const request = (await user.client.get(requestPath('end-to-end'))) as {
          status?: { phase?: string; worker?: string };
        };
        return request.status?.phase === 'Granted' ? request.status : undefined;
      },
      { timeoutMs: 40_000, what: 'the request granted' },
    );
    expect(granted.worker).toBe(workerC);
    // The Event is written after the status that says Granted: poll for it.
    await eventually(
      async () => {
        const events = (await cluster.admin.get(`/api/v1/namespaces/${namespace}/events`, {
          query: { fieldSelector: 'involvedObject.name=end-to-end' },
        })) as { items: { reason: string }[] };
        return events.items.some((event) => event.reason === 'Granted') ? true : undefined;
      },
      { what: 'a Granted Event for end-to-end' },
    );
    const election = (await cluster.admin.get(
      coordinationLeasePath(namespace, 'simlock-controller'),
    )) as { spec: { holderIdentity?: string } };
    expect(election.spec.holderIdentity).toBe('rbac-test-controller');

    // Release: the controller deletes the Lease, the agent reclaims the device and lets it go,
    // the controller lets the request go.
    await user.client.delete(requestPath('end-to-end'));
    await eventually(
      () =>
        cluster.admin.get(requestPath('end-to-end')).then(
          () => undefined,
          (error: unknown) => (error instanceof KubeApiError && error.status === 404) || undefined,
        ),
      { timeoutMs: 30_000, what: 'the request released and gone' },
    );
    expect(agent.output()).not.toMatch(/forbidden/i);
    expect(controllerOutput).not.toMatch(/forbidden/i);
  });
});
