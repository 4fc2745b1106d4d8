// An exec through the tunnel (ADR 0024) against direct mode (ADR 0025), side by side: one control
// plane, the controller as a process, the exec proxy in this process (as the e2e tests run it),
// and three real agent processes with the fake driver, each holding a leased Android phone and a
// leased iPhone:
//   tunnel: no endpoint, no exec port; it connects out to the proxy with its ServiceAccount token.
//   tls:    direct, its exec server on HTTPS with a certificate made by openssl (the proxy trusts
//           its CA).
//   plain:  direct over plain HTTP (the proxy's --allow-plain-http-agents).
// For each mode, through the proxy's HTTP API as a client calls it (runtime/exec-client.ts):
//   1. round trips of a tiny exec (`adb shell true`: the fake tool prints one line), p50/p99 ms;
//   2. a large output (`devicectl`: the fake tool prints --mib MiB of stdout), MiB/s from the
//      first byte to the exit event, and over the whole call; with the CPU time per MiB of this
//      process (the proxy and the client) and of the agent's process.
// The modes take turns within each round (the order rotates), so a burst of the shared machine's
// load falls on all of them alike.
//
//   node --import tsx bench/tunnel-exec.ts [--samples 200] [--large 10] [--mib 16] [--json [FILE]]
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { AgentTunnels, ProxyMetrics, createProxyApp, serveTunnels } from '../proxy/index.js';
import { execThroughProxy, silentLogger, simlockPath, type KubeClient } from '../runtime/index.js';
import {
  AGENT_RULES,
  allowLeaseExec,
  grant,
  makeCa,
  makeLeaf,
  serviceAccountToken,
  startAgent,
  tunnelRule,
  type AgentProcess,
} from '../test/index.js';
import {
  CommandLine,
  FLEET_LABEL,
  createNamespace,
  log,
  machineName,
  median,
  onInterrupt,
  outDir,
  percentile,
  startBenchControlPlane,
  startController,
  waitUntil,
} from './harness/index.js';

const MODES = ['tunnel', 'tls', 'plain'] as const;
type Mode = (typeof MODES)[number];
const NAMESPACE = 'bench-tunnel';
const CHUNK = 'x'.repeat(65_535) + '\n';

const line = new CommandLine();
line.only(['--samples', '--large', '--mib', '--json']);
const samples = line.integer('--samples', 200);
const largeRuns = line.integer('--large', 10);
const mib = line.integer('--mib', 16);
const jsonPath = line.optionalValue('--json');

/** One agent's fake script: a phone per platform, named after its mode so requests find it. */
function script(mode: Mode) {
  return {
    platforms: ['ios', 'android'],
    devices: [
      {
        id: `pixel-${mode}`,
        name: `Pixel ${mode}`,
        model: `Pixel ${mode}`,
        platform: 'android',
        os: '34',
        physical: true,
      },
      {
        id: `iphone-${mode}`,
        name: `iPhone ${mode}`,
        model: `iPhone ${mode}`,
        platform: 'ios',
        os: '18.4',
        physical: true,
      },
    ],
    tools: {
      adb: { exitCode: 0 },
      devicectl: { exitCode: 0, stdout: CHUNK, stdoutRepeat: mib * 16 },
    },
  };
}

/** A kubeconfig for the admin's API server that presents `token` (the tunnel agent's identity). */
async function tokenKubeconfig(adminPath: string, dir: string, token: string): Promise<string> {
  const admin = parse(await readFile(adminPath, 'utf8')) as { clusters: unknown[] };
  const path = join(dir, 'tunnel-agent.kubeconfig');
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: admin.clusters,
      users: [{ name: 'agent', user: { token } }],
      contexts: [
        {
          name: 'agent',
          context: { cluster: (admin.clusters[0] as { name: string }).name, user: 'agent' },
        },
      ],
      'current-context': 'agent',
    }),
    { mode: 0o600 },
  );
  return path;
}

/** The exec proxy in this process: tunnels held here, TLS agents verified by `caFile`. */
async function startProxy(admin: KubeClient, token: string, caFile: string) {
  const metrics = new ProxyMetrics();
  const tunnels = new AgentTunnels();
  metrics.watchTunnels(tunnels);
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  server.on(
    'request',
    createProxyApp({
      client: admin,
      log: silentLogger,
      agentToken: () => token,
      tunnels,
      advertiseUrl: url,
      metrics,
      agentTls: { caFile, allowPlainHttp: true },
    }),
  );
  serveTunnels(server, { client: admin, log: silentLogger, tunnels, advertiseUrl: url });
  return { server, url };
}

async function requestGranted(admin: KubeClient, name: string, spec: object): Promise<void> {
  await admin.create(simlockPath('leaseRequest', { namespace: NAMESPACE }), {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'LeaseRequest',
    metadata: { name, namespace: NAMESPACE },
    spec: { durationSeconds: 7200, ...spec },
  });
  await waitUntil(
    async () => {
      const request = (await admin.get(
        simlockPath('leaseRequest', { namespace: NAMESPACE, name }),
      )) as { status?: { phase?: string } };
      return request.status?.phase === 'Granted';
    },
    60_000,
    `request ${name} granted`,
  );
}

/** CPU seconds (user + system) a process has used, from /proc (Linux); 0 when unreadable. */
async function processCpuSeconds(pid: number | undefined): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100 || 0;
}

function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

interface ModeResult {
  mode: Mode;
  tinyMs: number[];
  largeMiBps: number[];
  largeWholeMiBps: number[];
  largeFirstByteMs: number[];
  /** CPU seconds per MiB of the large outputs: this process (proxy and client), the agent. */
  proxyCpuPerMiB: number[];
  agentCpuPerMiB: number[];
}

const dir = await outDir('tunnel-exec');
const work = await mkdtemp(join(tmpdir(), 'simlock-bench-tunnel-'));
const load = { before: loadavg(), after: [] as number[] };
const cluster = await startBenchControlPlane();
const stops: (() => Promise<unknown>)[] = [() => cluster.stop()];
const stopAll = async () => {
  for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined);
  await rm(work, { recursive: true, force: true });
};
const forget = onInterrupt(stopAll);
const results = new Map<Mode, ModeResult>(
  MODES.map((mode) => [
    mode,
    {
      mode,
      tinyMs: [],
      largeMiBps: [],
      largeWholeMiBps: [],
      largeFirstByteMs: [],
      proxyCpuPerMiB: [],
      agentCpuPerMiB: [],
    },
  ]),
);
try {
  const { admin, controlPlane } = cluster;
  await createNamespace(admin, NAMESPACE);
  await allowLeaseExec(admin, {
    namespace: NAMESPACE,
    serviceAccount: 'simlock-proxy',
    binding: 'proxy-exec',
  });
  const token = await serviceAccountToken(admin, NAMESPACE, 'simlock-proxy', {
    create: true,
    expirationSeconds: 7200,
  });
  const ca = await makeCa(work, 'agents-ca');
  const leaf = await makeLeaf(work, 'agent-tls', ca, ['127.0.0.1', 'localhost']);
  const proxy = await startProxy(admin, token, ca.certFile);
  stops.push(() => new Promise((resolve) => proxy.server.close(resolve)));

  const agentToken = await serviceAccountToken(admin, NAMESPACE, 'agent-tunnel', {
    create: true,
    expirationSeconds: 7200,
  });
  await grant(admin, [], `${NAMESPACE}-agent-tunnel`, [...AGENT_RULES, tunnelRule('w-tunnel')], {
    name: 'agent-tunnel',
    namespace: NAMESPACE,
  });
  const configs: Record<Mode, { kubeconfigPath: string; config: Record<string, unknown> }> = {
    tunnel: {
      kubeconfigPath: await tokenKubeconfig(controlPlane.kubeconfigPath, work, agentToken),
      config: { tunnel: { url: proxy.url } },
    },
    tls: {
      kubeconfigPath: controlPlane.kubeconfigPath,
      config: { tls: { certFile: leaf.certFile, keyFile: leaf.keyFile } },
    },
    plain: { kubeconfigPath: controlPlane.kubeconfigPath, config: {} },
  };
  const agents: AgentProcess[] = [];
  for (const mode of MODES) {
    log(`starting the ${mode} agent`);
    const agent = await startAgent({
      admin,
      kubeconfigPath: configs[mode].kubeconfigPath,
      name: `w-${mode}`,
      namespace: NAMESPACE,
      fleet: NAMESPACE,
      script: script(mode),
      config: configs[mode].config,
      execAllowedIdentities: [`system:serviceaccount:${NAMESPACE}:simlock-proxy`],
      logPath: join(dir, `agent-${mode}.log`),
    });
    agents.push(agent);
    stops.push(() => agent.kill('SIGKILL'));
  }
  await waitUntil(
    async () => (await agents[0]?.status())?.tunnel?.connected === true,
    30_000,
    'the tunnel connected',
  );
  const controller = await startController({
    kubeconfigPath: controlPlane.kubeconfigPath,
    systemNamespace: NAMESPACE,
    watchNamespace: NAMESPACE,
    workerSelector: `${FLEET_LABEL}=${NAMESPACE}`,
    logPath: join(dir, 'controller.log'),
  });
  stops.push(() => controller.stop());
  for (const mode of MODES) {
    await requestGranted(admin, `android-${mode}`, {
      platform: 'android',
      physical: true,
      model: `Pixel ${mode}`,
    });
    await requestGranted(admin, `ios-${mode}`, {
      platform: 'ios',
      physical: true,
      model: `iPhone ${mode}`,
    });
  }
  log('every lease granted');

  const exec = async (lease: string, tool: 'adb' | 'devicectl', args: string[]) => {
    let bytes = 0;
    let firstByteAt = 0;
    const started = performance.now();
    const { exitCode } = await execThroughProxy({
      url: proxy.url,
      token,
      namespace: NAMESPACE,
      lease,
      tool,
      args,
      onOutput: (_stream, data) => {
        if (bytes === 0) firstByteAt = performance.now();
        bytes += data.length;
      },
    });
    if (exitCode !== 0) throw new Error(`${lease}: ${tool} exited ${exitCode}`);
    const ended = performance.now();
    return { bytes, totalMs: ended - started, firstByteMs: firstByteAt - started, ended };
  };
  const rotated = (round: number): Mode[] =>
    MODES.map((_, index) => MODES[(index + round) % MODES.length] as Mode);

  // A warm-up round each: the first exec of a mode opens its connections.
  for (const mode of MODES) await exec(`android-${mode}`, 'adb', ['shell', 'true']);
  log(`${samples} tiny execs per mode, interleaved`);
  for (let round = 0; round < samples; round += 1) {
    for (const mode of rotated(round)) {
      const { totalMs } = await exec(`android-${mode}`, 'adb', ['shell', 'true']);
      results.get(mode)?.tinyMs.push(totalMs);
    }
  }
  log(`${largeRuns} outputs of ${mib} MiB per mode, interleaved`);
  for (let round = 0; round < largeRuns; round += 1) {
    for (const mode of rotated(round)) {
      const pid = agents[MODES.indexOf(mode)]?.child.pid;
      const cpuBefore = { own: ownCpuSeconds(), agent: await processCpuSeconds(pid) };
      const run = await exec(`ios-${mode}`, 'devicectl', ['device', 'info', 'apps']);
      const mebibytes = run.bytes / 2 ** 20;
      if (mebibytes < mib) throw new Error(`${mode}: ${mebibytes.toFixed(2)} MiB came`);
      const result = results.get(mode);
      result?.largeMiBps.push(mebibytes / ((run.totalMs - run.firstByteMs) / 1000));
      result?.largeWholeMiBps.push(mebibytes / (run.totalMs / 1000));
      result?.largeFirstByteMs.push(run.firstByteMs);
      result?.proxyCpuPerMiB.push((ownCpuSeconds() - cpuBefore.own) / mebibytes);
      result?.agentCpuPerMiB.push(((await processCpuSeconds(pid)) - cpuBefore.agent) / mebibytes);
    }
  }
  load.after = loadavg();
} finally {
  forget();
  await stopAll();
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const rows = [...results.values()].map((result) => ({
  mode: result.mode,
  tinyP50Ms: round1(percentile(result.tinyMs, 50)),
  tinyP99Ms: round1(percentile(result.tinyMs, 99)),
  largeMedianMiBps: round1(median(result.largeMiBps)),
  largeMinMiBps: round1(Math.min(...result.largeMiBps)),
  largeWholeMedianMiBps: round1(median(result.largeWholeMiBps)),
  largeFirstByteMedianMs: round1(median(result.largeFirstByteMs)),
  proxyCpuMsPerMiB: round1(1000 * median(result.proxyCpuPerMiB)),
  agentCpuMsPerMiB: round1(1000 * median(result.agentCpuPerMiB)),
}));
const loads = (values: number[]) => values.map((value) => value.toFixed(2)).join(' ');
console.log(`exec through the proxy: ${samples} tiny execs and ${largeRuns} × ${mib} MiB per mode`);
console.log(`machine: ${machineName()}`);
console.log(`load average before: ${loads(load.before)}; after: ${loads(load.after)}`);
console.log(
  `${'mode'.padEnd(8)}${'tiny p50'.padStart(10)}${'tiny p99'.padStart(10)}${'MiB/s (stream)'.padStart(16)}${'min'.padStart(8)}${'MiB/s (call)'.padStart(14)}${'1st byte'.padStart(10)}${'CPU ms/MiB proxy+client'.padStart(25)}${'agent'.padStart(7)}`,
);
for (const row of rows) {
  console.log(
    `${row.mode.padEnd(8)}${`${row.tinyP50Ms} ms`.padStart(10)}${`${row.tinyP99Ms} ms`.padStart(10)}${String(row.largeMedianMiBps).padStart(16)}${String(row.largeMinMiBps).padStart(8)}${String(row.largeWholeMedianMiBps).padStart(14)}${`${row.largeFirstByteMedianMs} ms`.padStart(10)}${String(row.proxyCpuMsPerMiB).padStart(25)}${String(row.agentCpuMsPerMiB).padStart(7)}`,
  );
}
if (line.has('--json')) {
  const path = jsonPath ?? join(dir, 'results.json');
  await writeFile(
    path,
    JSON.stringify(
      {
        machine: machineName(),
        date: new Date().toISOString(),
        load,
        samples,
        largeRuns,
        mib,
        rows,
        raw: [...results.values()],
      },
      null,
      2,
    ),
  );
  console.log(`results written to ${path}`);
}
process.exit(0);
