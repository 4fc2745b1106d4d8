// A lease whose Lease lives elsewhere than its request (ADR 0034: in its worker's namespace, named
// by the request's UID): its holder reaches it by the request alone. The real proxy (TokenReview,
// SubjectAccessReview on the request) and a real agent process with the fake driver, against the
// real API server; no controller: the test plays it, making the Lease in the worker's namespace (the
// agent grants it) and writing the request's status as the controller does.
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseObject, LeaseRequestObject, SimlockError, type ExecTool } from '../api/index.js';
import { ProxyAccess, extendLease, screenshotOfLease } from '../client/index.js';
import { ActivityRecorder, createProxyApp, leaseStatusActivityStore } from '../proxy/index.js';
import { execThroughProxy, silentLogger, simlockPath } from '../runtime/index.js';
import { iosSimulatorScript, startFleetAgent, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { makeLeaseNamespace } from '../test/cluster/leases.js';
import { allowLeaseExec } from '../test/cluster/role-bindings.js';
import { serviceAccountToken } from '../test/cluster/service-account-token.js';
import { aLease, aLeaseRequest, grantedRequestStatus } from '../test/fixtures/objects.js';

const cluster = useCluster('lease-elsewhere');
let fleet: TestFleet;
let agent: AgentProcess;
let proxy: Server;
let proxyUrl: string;
/** May exec on leases in the fleet's namespace (create leases/exec), and nothing else. */
let callerToken: string;
/** The worker's namespace, where the Lease lives. */
let leaseNamespace: string;
/** The simulator the agent granted under the Lease. */
let deviceId: string;
/** The Lease's name: not its request's. */
const LEASE = 'a1b2c3d4-0000-4000-8000-00000000e15e';

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  const ns = fleet.namespace;
  const proxyToken = await serviceAccountToken(cluster.admin, ns, 'simlock-proxy', {
    create: true,
  });
  callerToken = await serviceAccountToken(cluster.admin, ns, 'alice', { create: true });
  await allowLeaseExec(cluster.admin, {
    namespace: ns,
    serviceAccount: 'alice',
    binding: 'alice-exec',
  });
  agent = await startFleetAgent(
    cluster,
    fleet,
    iosSimulatorScript(),
    {},
    { execAllowedIdentities: [`system:serviceaccount:${ns}:simlock-proxy`] },
  );
  const app = createProxyApp({
    client: cluster.admin,
    log: silentLogger,
    agentToken: () => proxyToken,
    // The test agent serves plain HTTP on loopback (agent TLS: e2e/agent-tls.test.ts).
    agentTls: { allowPlainHttp: true },
    activity: new ActivityRecorder({
      store: leaseStatusActivityStore(cluster.admin),
      log: silentLogger,
    }),
  });
  proxy = await new Promise<Server>((resolve) => {
    const server: Server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
  const address = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  // The Lease, where the controller makes it: the worker's namespace, under another name.
  leaseNamespace = await makeLeaseNamespace(cluster.admin, agent.name);
  await cluster.admin.create(
    simlockPath('lease', { namespace: leaseNamespace }),
    aLease(LEASE)
      .label('simlock.dev/worker', agent.name)
      .worker(agent.name)
      .device({ platform: 'ios', model: 'iPhone 16' })
      .expiresIn()
      .spec({ durationSeconds: 3600 })
      .obj(),
  );
  const lease = await eventually(
    async () => {
      const read = LeaseObject.parse(
        await cluster.admin.get(simlockPath('lease', { namespace: leaseNamespace, name: LEASE })),
      );
      return read.status?.phase === 'Granted' ? read : undefined;
    },
    { what: 'the agent granting the Lease in its namespace', timeoutMs: 20_000 },
  );
  deviceId = lease.status?.device?.id ?? '';
  // The request, in the holder's namespace, saying where its Lease is.
  await grantedRequest('held', lease, { name: LEASE, namespace: leaseNamespace });
}, 60_000);

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await cluster.admin
    .delete(simlockPath('lease', { namespace: leaseNamespace, name: LEASE }))
    .catch(() => undefined);
  await agent?.kill();
  await fleet?.cleanup();
});

/** A request granted as the controller writes it, its status naming `lease`. */
async function grantedRequest(
  name: string,
  lease: LeaseObject,
  where: { name: string; namespace: string },
): Promise<void> {
  await cluster.admin.create(
    simlockPath('leaseRequest', { namespace: fleet.namespace }),
    aLeaseRequest(name).ios('iPhone 16').duration(3600).obj(),
  );
  await cluster.admin.patch(
    simlockPath('leaseRequest', { namespace: fleet.namespace, name, subresource: 'status' }),
    {
      status: grantedRequestStatus({
        worker: lease.spec.worker,
        ...(lease.status?.device ? { device: lease.status.device } : {}),
        expiresAt: lease.spec.expiresAt,
        durationSeconds: 3600,
        lease: where,
      }),
    },
  );
}

async function run(lease: string, tool: ExecTool, args: string[]) {
  const output: string[] = [];
  const { exitCode } = await execThroughProxy({
    url: proxyUrl,
    token: callerToken,
    namespace: fleet.namespace,
    lease,
    tool,
    args,
    onOutput: (_stream, data) => output.push(data),
  });
  return { exitCode, output: output.join('') };
}

async function refusal(promise: Promise<unknown>): Promise<SimlockError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (error instanceof SimlockError) return error;
  throw new Error(`not refused with a SimlockError: ${String(error)}`);
}

describe('a lease whose Lease is in its worker’s namespace, under another name', () => {
  it('runs a tool on its device through the proxy, and records the exec on that Lease', async () => {
    // The fake driver's tool says what ran on which device: the one granted under that Lease.
    const { exitCode, output } = await run('held', 'simctl', ['listapps']);
    expect([exitCode, output]).toEqual([0, `fake-tool: simctl listapps ${deviceId}\n`]);
    // Idle time counts on the Lease, where the controller reads it.
    const activity = await eventually(
      async () => {
        const lease = LeaseObject.parse(
          await cluster.admin.get(simlockPath('lease', { namespace: leaseNamespace, name: LEASE })),
        );
        return lease.status?.activity;
      },
      { what: 'exec activity on the Lease in the worker’s namespace' },
    );
    expect(Date.parse(activity.lastExecAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('takes a screenshot of its device, the client reading only the request', async () => {
    const access = new ProxyAccess(cluster.admin, { proxyUrl, token: callerToken });
    const png = await screenshotOfLease(cluster.admin, access, fleet.namespace, 'held');
    expect(Buffer.from(png.subarray(1, 4)).toString()).toBe('PNG');
  });

  it('is extended from what its request says, waiting for the request’s expiry to move', async () => {
    const before = LeaseRequestObject.parse(
      await cluster.admin.get(
        simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'held' }),
      ),
    );
    const expiresAt = Date.parse(before.status?.expiresAt ?? '');
    const extended = extendLease(cluster.admin, fleet.namespace, 'held', { bySeconds: 600 });
    // Playing the controller: the request's duration grows, so its expiry moves.
    const grown = await eventually(
      async () => {
        const request = LeaseRequestObject.parse(
          await cluster.admin.get(
            simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'held' }),
          ),
        );
        return request.spec.durationSeconds > 3600 ? request.spec.durationSeconds : undefined;
      },
      { what: 'the extension written on the request' },
    );
    expect(grown).toBe(4200);
    const moved = new Date(expiresAt + 600_000).toISOString();
    await cluster.admin.patch(
      simlockPath('leaseRequest', {
        namespace: fleet.namespace,
        name: 'held',
        subresource: 'status',
      }),
      { status: { expiresAt: moved, durationSeconds: 4200 } },
    );
    await expect(extended).resolves.toEqual({ expiresAt: moved, capped: false });
  });

  it('is refused naming the lease as its holder knows it when its Lease is gone', async () => {
    const lease = LeaseObject.parse(
      await cluster.admin.get(simlockPath('lease', { namespace: leaseNamespace, name: LEASE })),
    );
    await grantedRequest('orphan', lease, { name: 'no-such-lease', namespace: leaseNamespace });
    const error = await refusal(run('orphan', 'simctl', ['listapps']));
    expect([error.code, error.message]).toEqual([
      'LEASE_NOT_ACTIVE',
      `lease ${fleet.namespace}/orphan is not granted (its Lease is gone)`,
    ]);
  });
});
