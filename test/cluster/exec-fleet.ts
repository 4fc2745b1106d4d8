// A fleet that serves leases end to end, for tests of the typed client, the MCP server and lease
// lifetimes: a real agent process with the fake driver (two iPhone 16 simulators, two iOS leases at
// a time), the controller in-process, the real exec proxy, and a service-account token that may
// exec.
import type { Server } from 'node:http';
import {
  ControllerMetrics,
  type Reconciler,
  type ReconcilerOptions,
} from '../../controller/index.js';
import { ActivityRecorder, createProxyApp, leaseStatusActivityStore } from '../../proxy/index.js';
import { silentLogger } from '../../runtime/index.js';
import { iosSimulatorScript, startAgent, type AgentProcess } from './agents.js';
import { controllerFor } from './controller.js';
import { TestFleet } from './fleet.js';
import { allowLeaseExec } from './role-bindings.js';
import { serviceAccountToken } from './service-account-token.js';
import { eventually, type ClusterTestContext } from './harness.js';

export interface ExecFleet {
  fleet: TestFleet;
  agent: AgentProcess;
  proxyUrl: string;
  /** The proxy's own token, which may exec in the fleet's namespace (Role `lease-exec`). */
  token: string;
  /** Resolves once no device of the agent is leased or being reclaimed. */
  devicesFree(timeoutMs?: number): Promise<void>;
  /**
   * Resolves once the in-process controller sees `count` workers that take requests (its
   * simlock_workers{state="ready"}): a worker started later is routed to only from then on.
   */
  workersReady(count: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ExecFleetOptions {
  /** The fake driver's answers per tool (see iosSimulatorScript). */
  tools?: Record<string, unknown>;
  /** The agent's whole fake-driver script, instead of iosSimulatorScript({ tools }). */
  script?: Record<string, unknown>;
  /** Settings of the in-process controller beside the defaults of controllerFor. */
  controller?: Partial<ReconcilerOptions>;
  /** The proxy records exec activity on the Lease (what idle timeouts count). */
  recordActivity?: boolean;
  /** The agent's config over startAgent's (e.g. `drivers: ['simctl']` over a stand-in). */
  agentConfig?: Record<string, unknown>;
  /** The agent's environment over this one's (a PATH with stand-in device tools first). */
  agentEnv?: NodeJS.ProcessEnv;
}

export async function startExecFleet(
  cluster: ClusterTestContext,
  options: ExecFleetOptions = {},
): Promise<ExecFleet> {
  const fleet = await TestFleet.create(cluster);
  const ns = fleet.namespace;
  const token = await serviceAccountToken(cluster.admin, ns, 'simlock-proxy', { create: true });
  await allowLeaseExec(cluster.admin, {
    namespace: ns,
    serviceAccount: 'simlock-proxy',
    binding: 'proxy-exec',
  });
  const agent = await startAgent({
    admin: cluster.admin,
    kubeconfigPath: cluster.kubeconfigPath,
    name: fleet.name('a'),
    label: 'worker-a',
    namespace: ns,
    fleet: ns,
    script: options.script ?? iosSimulatorScript({ tools: options.tools ?? {} }),
    execAllowedIdentities: [`system:serviceaccount:${ns}:simlock-proxy`],
    ...(options.agentConfig ? { config: options.agentConfig } : {}),
    ...(options.agentEnv ? { env: options.agentEnv } : {}),
  });
  const metrics = options.controller?.metrics ?? new ControllerMetrics();
  const reconciler: Reconciler = controllerFor(cluster, fleet, {
    ...options.controller,
    metrics,
  });
  await reconciler.start();
  const app = createProxyApp({
    client: cluster.admin,
    log: silentLogger,
    agentToken: () => token,
    // The test agent serves plain HTTP on loopback (agent TLS: e2e/agent-tls.test.ts).
    agentTls: { allowPlainHttp: true },
    ...(options.recordActivity
      ? {
          activity: new ActivityRecorder({
            store: leaseStatusActivityStore(cluster.admin),
            log: silentLogger,
          }),
        }
      : {}),
  });
  const proxy = await new Promise<Server>((resolve) => {
    const server: Server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
  const address = proxy.address();
  const proxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    fleet,
    agent,
    proxyUrl,
    token,
    devicesFree: (timeoutMs = 20_000) =>
      eventually(
        async () => {
          const devices = (await agent.status())?.devices ?? [];
          return devices.length > 0 && devices.every((device) => device.state === 'ready')
            ? true
            : undefined;
        },
        { timeoutMs, intervalMs: 100, what: 'every device ready' },
      ).then(() => undefined),
    workersReady: (count) =>
      eventually(
        async () => {
          const ready = (await metrics.workers.get()).values.find(
            (value) => value.labels.state === 'ready',
          );
          return (ready?.value ?? 0) >= count ? true : undefined;
        },
        { intervalMs: 50, what: `the controller seeing ${count} workers ready` },
      ).then(() => undefined),
    stop: async () => {
      proxy.close();
      await reconciler.stop();
      await agent.kill('SIGKILL');
    },
  };
}
