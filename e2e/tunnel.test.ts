// Hosts behind NAT (issue 35, ADR 0024): a real agent process with no endpoint, listening on no
// exec port, connects out to the exec proxy with its own ServiceAccount token, and every exec
// reaches it through that tunnel. The proxy admits a tunnel only for the identity's own Worker, as
// RBAC on `workers/tunnel` says (another worker: 403; no identity: 401). The tunnel runs through a
// TCP relay, so a test cuts it as a network would: the exec under way ends UNAVAILABLE and the
// agent connects again by itself. The MCP server's exec takes the same way (the console's
// screenshot is `screenshotThroughProxy`, the function the screenshot test calls).
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LeaseObject, SimlockError, tunnelPath, type ExecTool } from '../api/index.js';
import type { Reconciler } from '../controller/index.js';
import { AgentTunnels, ProxyMetrics, createProxyApp, serveTunnels } from '../proxy/index.js';
import {
  execThroughProxy,
  screenshotThroughProxy,
  silentLogger,
  simlockPath,
} from '../runtime/index.js';
import { iosSimulatorScript, startAgent, type AgentProcess } from '../test/cluster/agents.js';
import { controllerFor } from '../test/cluster/controller.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';
import { serviceAccountIdentity } from '../test/cluster/identities.js';
import { AGENT_RULES, grant, tunnelRule } from '../test/cluster/agent-rbac.js';
import { Relay } from '../test/cluster/relay.js';
import { serviceAccountToken } from '../test/cluster/service-account-token.js';

const cluster = useCluster('tunnel');
const iphone = {
  id: '00008110-001A2B3C4D5E',
  name: "Tester's iPhone",
  model: 'iPhone 15 Pro',
  platform: 'ios',
  os: '18.4',
  physical: true,
};
const pixel = {
  id: 'R58N12ABCDE',
  name: 'Pixel 8',
  model: 'Pixel 8',
  platform: 'android',
  os: '34',
  physical: true,
};
let fleet: TestFleet;
let agent: AgentProcess;
let reconciler: Reconciler;
let proxy: Server;
let tunnels: AgentTunnels;
let relay: Relay;
let proxyUrl: string;
let otherProxy: Server;
let otherProxyUrl: string;
let callerToken: string;
const clusterScoped: string[] = [];

/** One exec proxy replica, in process, named by its own URL (its --advertise-url). */
async function startReplica(
  proxyToken: string,
): Promise<{ server: Server; url: string; held: AgentTunnels }> {
  const metrics = new ProxyMetrics();
  const held = new AgentTunnels(metrics.registry);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const app = createProxyApp({
    client: cluster.admin,
    log: silentLogger,
    agentToken: () => proxyToken,
    tunnels: held,
    advertiseUrl: url,
    metrics,
  });
  server.on('request', app);
  serveTunnels(server, {
    client: cluster.admin,
    log: silentLogger,
    tunnels: held,
    pingMs: 1000,
    advertiseUrl: url,
  });
  return { server, url, held };
}

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  const ns = fleet.namespace;
  const proxyToken = await serviceAccountToken(cluster.admin, ns, 'simlock-proxy', {
    create: true,
  });
  callerToken = await serviceAccountToken(cluster.admin, ns, 'alice', { create: true });
  await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'lease-exec' },
    rules: [{ apiGroups: ['simlock.dev'], resources: ['leases/exec'], verbs: ['create'] }],
  });
  await cluster.admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-exec' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'lease-exec' },
    subjects: [{ kind: 'ServiceAccount', name: 'alice', namespace: ns }],
  });
  // The agent's own identity: the chart's agent role and the tunnel of its Worker alone.
  const agentIdentity = await serviceAccountIdentity(cluster.admin, ns, 'worker-a', {
    create: true,
  });
  await grant(
    cluster.admin,
    clusterScoped,
    `${ns}-agent-a`,
    [...AGENT_RULES, tunnelRule(fleet.name('a'))],
    {
      name: 'worker-a',
      namespace: ns,
    },
  );

  // Two replicas; the agent connects to the first (through a relay: the network between them, to
  // cut); the second forwards the worker's calls to it.
  ({ server: proxy, url: proxyUrl, held: tunnels } = await startReplica(proxyToken));
  ({ server: otherProxy, url: otherProxyUrl } = await startReplica(proxyToken));
  relay = await Relay.start(Number(new URL(proxyUrl).port));

  agent = await startAgent({
    admin: cluster.admin,
    kubeconfigPath: agentIdentity.kubeconfigPath,
    name: fleet.name('a'),
    label: 'worker-a',
    namespace: ns,
    fleet: ns,
    script: iosSimulatorScript({
      tools: {
        devicectl: { exitCode: 7, stdout: 'com.example.app\n' },
        adb: { delayMs: 120_000, stdout: 'never\n' },
      },
      devices: [...(iosSimulatorScript().devices as object[]), iphone, pixel],
      platforms: ['ios', 'android'],
    }),
    execAllowedIdentities: [`system:serviceaccount:${ns}:simlock-proxy`],
    config: { tunnel: { url: `http://127.0.0.1:${relay.port}` } },
  });
  reconciler = controllerFor(cluster, fleet);
  await reconciler.start();
  await fleet.createRequest('sim', { platform: 'ios', model: 'iPhone 16' });
  await fleet.createRequest('phone', { platform: 'ios', physical: true });
  await fleet.createRequest('android', { platform: 'android', physical: true });
  for (const name of ['sim', 'phone', 'android']) await fleet.phase(name, 'Granted', 20_000);
}, 90_000);

afterAll(async () => {
  await reconciler?.stop();
  await agent?.kill('SIGKILL');
  proxy?.close();
  otherProxy?.close();
  await relay?.close();
  for (const path of clusterScoped) await cluster.admin.delete(path).catch(() => undefined);
});

async function run(lease: string, tool: ExecTool, args: string[], url = proxyUrl) {
  const output: string[] = [];
  const { exitCode } = await execThroughProxy({
    url,
    token: callerToken,
    namespace: fleet.namespace,
    lease,
    tool,
    args,
    onOutput: (_stream, data) => output.push(data),
  });
  return { exitCode, output: output.join('') };
}

function tunnelConnected(): Promise<true> {
  return eventually(async () => ((await agent.status())?.tunnel?.connected ? true : undefined), {
    timeoutMs: 20_000,
    intervalMs: 100,
    what: 'the tunnel connected in the Worker status',
  });
}

/** The HTTP status the proxy answers a tunnel upgrade for `worker` with this token. */
function upgradeStatus(worker: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(new URL(tunnelPath(worker), proxyUrl.replace('http', 'ws')), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    socket.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(101);
      socket.close();
    });
    socket.on('error', (error) => reject(error));
  });
}

function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}

/** A series of the agent's metrics, served on its loopback local API when it has no exec port. */
async function agentSeries(series: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${agent.localPort}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function proxySeries(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Starts a long exec on the Android lease and resolves once its first output came. */
async function longExec(signal?: AbortSignal): Promise<{ ended: Promise<unknown> }> {
  let sawOutput: () => void = () => undefined;
  const outputSeen = new Promise<void>((resolve) => (sawOutput = resolve));
  const running = execThroughProxy({
    url: proxyUrl,
    token: callerToken,
    namespace: fleet.namespace,
    lease: 'android',
    tool: 'adb',
    args: ['shell', 'sleep', '120'],
    onOutput: () => sawOutput(),
    ...(signal ? { signal } : {}),
  });
  const ended = running.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  await Promise.race([outputSeen, ended]);
  return { ended };
}

describe('an agent behind NAT, through its tunnel', () => {
  it('has no endpoint, listens on no exec port, and says its tunnel is connected', async () => {
    await tunnelConnected();
    const status = await agent.status();
    expect(status?.endpoint).toBeUndefined();
    // The only port the process listens on is its loopback leasing API.
    const listening = await runCommand('ss', ['-ltnpH']);
    const ports = listening.stdout
      .split('\n')
      .filter((line) => line.includes(`pid=${agent.child.pid},`))
      .map((line) => Number(/:(\d+)\s/.exec(line)?.[1]));
    expect(ports).toEqual([agent.localPort]);
    // Each replica counts the agents connected to it.
    expect(await proxySeries(proxyUrl, 'simlock_proxy_agent_tunnels')).toBe(1);
    expect(await proxySeries(otherProxyUrl, 'simlock_proxy_agent_tunnels')).toBe(0);
  });

  it('runs a tool with its output streamed and its exit code', async () => {
    const { exitCode, output } = await run('phone', 'devicectl', ['device', 'info', 'apps']);
    expect(exitCode).toBe(7);
    expect(output).toContain(`fake-tool: devicectl device info apps --device ${iphone.id}`);
    // Each exec's stream is gone once it ended: a tunnel that lives for weeks keeps none.
    await eventually(
      () => Promise.resolve(tunnels.get(fleet.name('a'))?.openStreams === 0 ? true : undefined),
      { timeoutMs: 5_000, intervalMs: 50, what: 'no stream left open on the tunnel' },
    );
    expect(output).toContain('com.example.app\n');
  });

  it('reaches the agent through another proxy replica, which forwards to the one holding the tunnel', async () => {
    await tunnelConnected();
    expect((await agent.status())?.tunnel?.proxy).toBe(proxyUrl);
    const { exitCode, output } = await run(
      'phone',
      'devicectl',
      ['device', 'info', 'apps'],
      otherProxyUrl,
    );
    expect(exitCode).toBe(7);
    expect(output).toContain('com.example.app\n');
    // The caller is checked by the replica it called, too.
    await expect(
      execThroughProxy({
        url: otherProxyUrl,
        token: 'not-a-token',
        namespace: fleet.namespace,
        lease: 'phone',
        tool: 'devicectl',
        args: ['device', 'info', 'apps'],
        onOutput: () => undefined,
      }),
    ).rejects.toMatchObject({ code: 'UNAUTHENTICATED' });
  });

  it('takes a screenshot (a PNG, as over a port)', async () => {
    const lease = LeaseObject.parse(
      await cluster.admin.get(simlockPath('lease', { namespace: fleet.namespace, name: 'sim' })),
    );
    const png = await screenshotThroughProxy({
      namespace: fleet.namespace,
      name: 'sim',
      lease,
      proxy: () => ({ url: proxyUrl, token: callerToken }),
    });
    expect(png.subarray(1, 4).toString()).toBe('PNG');
  });

  it("serves MCP's exec: the plugin's MCP server, as a coding agent runs it, through the same proxy", async () => {
    await tunnelConnected();
    const transport = new StdioClientTransport({
      command: fileURLToPath(new URL('../bin/kubectl-simlock', import.meta.url)),
      args: [
        ...['mcp', '--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace],
        ...['--proxy-url', proxyUrl],
      ],
      env: { ...inheritedEnv(), SIMLOCK_TOKEN: callerToken },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'simlock-tunnel-e2e', version: '1.0.0' });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      expect(result.isError, text).toBeFalsy();
      return { ...result, text };
    };
    try {
      // A session execs on its own leases: the second simulator of the host behind NAT.
      const leased = await call('lease', { platform: 'ios', model: 'iPhone 16' });
      expect(leased.text).toMatch(/^Lease lease-\w+: iPhone 16 \(2\) sim-iphone-2 on worker-a /);
      const ran = await call('exec', { tool: 'simctl', args: ['listapps'] });
      expect(ran.structuredContent).toMatchObject({ exitCode: 0 });
      expect(ran.text).toContain('fake-tool: simctl listapps');
      await call('release', {});
    } finally {
      await client.close();
    }
  });

  it('ends an exec UNAVAILABLE when the tunnel is cut under it, and connects again by itself', async () => {
    await tunnelConnected();
    expect(await agentSeries('simlock_agent_tunnel_connected')).toBe(1);
    const goneBefore = await agentSeries('simlock_agent_execs_total{outcome="caller-gone"}');
    const { ended } = await longExec();
    await relay.refuse();
    const error = await ended;
    expect(error).toBeInstanceOf(SimlockError);
    expect((error as SimlockError).code).toBe('UNAVAILABLE');
    expect((error as SimlockError).message).toContain('tunnel');
    await eventually(
      async () => ((await agent.status())?.tunnel?.connected === false ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 100, what: 'the tunnel lost in the Worker status' },
    );
    expect(await agentSeries('simlock_agent_tunnel_connected')).toBe(0);
    // The agent stopped the tool whose caller it lost.
    await eventually(
      async () =>
        (await agentSeries('simlock_agent_execs_total{outcome="caller-gone"}')) > goneBefore
          ? true
          : undefined,
      { timeoutMs: 10_000, intervalMs: 100, what: 'the exec stopped on the agent' },
    );
    // While cut: the proxy has no route to the worker.
    await expect(run('phone', 'devicectl', ['device', 'info', 'apps'])).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
    await relay.reopen();
    await tunnelConnected();
    const { exitCode } = await run('phone', 'devicectl', ['device', 'info', 'apps']);
    expect(exitCode).toBe(7);
  }, 60_000);

  it('stops the tool on the host when the caller goes away', async () => {
    const goneBefore = await agentSeries('simlock_agent_execs_total{outcome="caller-gone"}');
    const caller = new AbortController();
    const { ended } = await longExec(caller.signal);
    caller.abort();
    await ended;
    await eventually(
      async () =>
        (await agentSeries('simlock_agent_execs_total{outcome="caller-gone"}')) > goneBefore
          ? true
          : undefined,
      { timeoutMs: 10_000, intervalMs: 100, what: 'the exec stopped on the agent' },
    );
  });

  it("refuses another agent identity the worker's tunnel (403), and a call with no identity (401)", async () => {
    const ns = fleet.namespace;
    const other = await serviceAccountToken(cluster.admin, ns, 'worker-b', { create: true });
    await grant(
      cluster.admin,
      clusterScoped,
      `${ns}-agent-b`,
      [...AGENT_RULES, tunnelRule(fleet.name('b'))],
      {
        name: 'worker-b',
        namespace: ns,
      },
    );
    expect(await upgradeStatus(fleet.name('a'), other)).toBe(403);
    expect(await upgradeStatus(fleet.name('a'))).toBe(401);
    expect(await upgradeStatus(fleet.name('a'), 'not-a-token')).toBe(401);
    // Its own worker it may serve (RBAC is read as the API server answers, eventually at once).
    expect(await upgradeStatus(fleet.name('b'), other)).toBe(101);
    // Worker a's execs still reach worker a's agent.
    await tunnelConnected();
    expect((await run('phone', 'devicectl', ['device', 'info', 'apps'])).exitCode).toBe(7);
  });
});
