// Grants against binds: how fast the simlock controller and its agents grant N LeaseRequests on W
// workers, next to how fast kube-scheduler binds N pods onto W Nodes, on the same control plane,
// with the same client rate limits. Prints grants/s, binds/s, their ratio and the API writes per
// grant and per bind, medians of several runs, and names the machine.
//
//   node --import tsx bench/grants-vs-binds.ts [--sizes 10x200,100x2000,1000x5000] [--runs 3]
//     [--qps 0,100,50] [--sides simlock,scheduler] [--concurrency 32] [--timeout-s 600]
//     [--json [FILE]] [--cpu-prof] [--keep]
//
// Each run starts a control plane of its own (etcd, kube-apiserver, the CRDs). In it, first
// kube-scheduler (the binary the project builds) binds N small pods onto W Ready, untainted Nodes;
// then the controller (controller/main.ts, a real process) and W fake-driver agents (in one process,
// bench/agent-host.ts; every worker has warm simulators to spare, so each grant is instant) grant N
// LeaseRequests. Each side's clock runs from the first create to the last bind or grant; the
// creates go through one unthrottled client, C at a time, alike for both sides. `--qps 50` gives the
// controller and kube-scheduler 50 requests/s, burst 100 (kube-scheduler's defaults); 0 is
// unthrottled. Agents are not throttled: each is its own host, with its own client, as kubelets are.
//
// Writes are counted by the API server (apiserver_request_total, before and after): simlock's are
// the simlock.dev resources and core Events; kube-scheduler's are pods (bindings, status) and
// Events. The N creates by the benchmark itself are left out of both. Heartbeats are not counted:
// the agents renew every 150 s here (so neither side has background writes: no kubelets run).
// Also recorded per run (JSON): CPU seconds of every process, the controller's own counters, and
// for simlock when each request was first seen Waiting, Dispatched and Granted. `--cpu-prof` writes
// V8 profiles of the controller and the agents to bench/out/grants-vs-binds/ (read them with
// bench/profile-summary.ts); `--keep` leaves the last control plane running for a look.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import os from 'node:os';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REQUEST_FINALIZER } from '../api/index.js';
import { Informer, simlockPath, type KubeClient, type KubeObject } from '../runtime/index.js';
import type { HostedWorker } from './agent-host.js';
import {
  CommandLine,
  apiserverWrites,
  cpuBetween,
  cpuCount,
  cpuSeconds,
  createNamespace,
  inParallel,
  machineName,
  median,
  onInterrupt,
  outDir,
  percentile,
  seconds,
  startAgentHost,
  startBenchControlPlane,
  startController,
  stopChild,
  totalWrites,
  waitUntil,
  writesBetween,
  type BenchControlPlane,
  type WriteCounts,
  log,
} from './cluster.js';

const DEFAULT_SIZES = [
  { workers: 10, requests: 200 },
  { workers: 100, requests: 2000 },
  { workers: 1000, requests: 5000 },
];
const FLEET_LABEL = 'simlock.dev/fleet';

interface Size {
  workers: number;
  requests: number;
}

interface SideResult {
  /** From the first create to the last grant or bind. */
  ms: number;
  done: number;
  perSecond: number;
  /** Writes other than the benchmark's own creates, by "VERB resource". */
  writes: WriteCounts;
  writesPerItem: number;
  /** Writes the clients themselves counted (simlock: controller and agents). */
  clientWrites?: Record<string, number>;
  failed?: number;
  /** Not every item was done within --timeout-s: the rate is what was done in that time. */
  unfinished?: boolean;
  /** The machine's 1-minute load average when the side ended (others share it). */
  loadAverage?: number;
  /** CPU seconds spent meanwhile, by process (this program, the control plane, ...). */
  cpu?: Record<string, number>;
  /** simlock: how requests went (ms), from what the benchmark's watch saw. */
  timeline?: Record<string, number | null>;
}

interface RunResult {
  size: Size;
  qps: number;
  run: number;
  simlock?: SideResult;
  scheduler?: SideResult;
}

const line = new CommandLine();
line.only([
  '--sizes',
  '--runs',
  '--qps',
  '--sides',
  '--concurrency',
  '--json',
  '--cpu-prof',
  '--keep',
  '--timeout-s',
]);
const sizes: Size[] =
  line.list('--sizes')?.map((text) => {
    const [workers, requests] = text.split('x').map(Number);
    if (!Number.isInteger(workers) || !Number.isInteger(requests) || !workers || !requests)
      throw new Error(`--sizes takes WxN pairs such as 10x200, not ${text}`);
    return { workers, requests };
  }) ?? DEFAULT_SIZES;
const runs = line.integer('--runs', 3);
const qpsList = (line.list('--qps') ?? ['0', '100', '50']).map(Number);
if (qpsList.some((qps) => !Number.isFinite(qps) || qps < 0))
  throw new Error('--qps takes numbers (0: unthrottled)');
const sides = new Set(line.list('--sides') ?? ['scheduler', 'simlock']);
const concurrency = line.integer('--concurrency', 32);
const jsonPath = line.optionalValue('--json');
const cpuProfile = line.has('--cpu-prof');
/** A side still not done after this long is reported as unfinished, with what it did by then. */
const sideTimeoutMs = line.integer('--timeout-s', 600) * 1000;

// ------------------------------------------------------------------------------------------------
// kube-scheduler

function nodeObject(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {},
  };
}

function nodeStatus(pods: number) {
  const capacity = { cpu: '1000', memory: '4000Gi', pods: String(pods) };
  const now = new Date().toISOString();
  return {
    status: {
      capacity,
      allocatable: capacity,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'benchmark node',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  };
}

function podObject(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      containers: [
        {
          name: 'main',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '1m', memory: '1Mi' } },
        },
      ],
      terminationGracePeriodSeconds: 0,
    },
  };
}

async function schedulerSide(
  cluster: BenchControlPlane,
  size: Size,
  qps: number,
  dir: string,
  tag: string,
): Promise<SideResult> {
  const { admin, controlPlane } = cluster;
  const namespace = `pods-${tag}`;
  await createNamespace(admin, namespace);
  const nodes = Array.from({ length: size.workers }, (_, index) => `node-${tag}-${index}`);
  const podsPerNode = Math.max(110, Math.ceil((size.requests / size.workers) * 2));
  await inParallel(nodes, 20, async (name) => {
    await admin.create('/api/v1/nodes', nodeObject(name));
    // The TaintNodesByCondition admission plugin taints a new Node not-ready, and no node
    // lifecycle controller runs here to lift it: the Node is Ready, so lift it as that would.
    await admin.patch(`/api/v1/nodes/${name}`, { spec: { taints: null } });
    await admin.patch(`/api/v1/nodes/${name}/status`, nodeStatus(podsPerNode));
  });

  const limits =
    qps > 0
      ? [`--kube-api-qps=${qps}`, `--kube-api-burst=${qps * 2}`]
      : ['--kube-api-qps=100000', '--kube-api-burst=100000'];
  const scheduler = spawn(
    join(controlPlane.binDir, 'kube-scheduler'),
    [
      `--kubeconfig=${controlPlane.kubeconfigPath}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--v=1',
      ...limits,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const forgetScheduler = onInterrupt(() => stopChild(scheduler, 'SIGKILL'));
  scheduler.once('exit', forgetScheduler);
  const schedulerLog = createWriteStream(join(dir, `kube-scheduler-${tag}.log`));
  scheduler.stdout?.pipe(schedulerLog);
  scheduler.stderr?.pipe(schedulerLog);

  const bound = new Set<string>();
  const pods = new Informer(admin, { path: `/api/v1/namespaces/${namespace}/pods` });
  pods.on((event) => {
    const spec = event.object.spec as { nodeName?: string } | undefined;
    if (event.type !== 'deleted' && spec?.nodeName) bound.add(event.object.metadata.name);
  });
  pods.start();
  await pods.waitForSync();
  try {
    // Ready means it binds: one pod first, outside the count.
    await admin.create(`/api/v1/namespaces/${namespace}/pods`, podObject('warm-up'));
    await waitUntil(
      () => {
        if (scheduler.exitCode !== null) throw new Error('kube-scheduler exited; see its log');
        return bound.has('warm-up');
      },
      60_000,
      'kube-scheduler binding',
    );
    bound.clear();
    const before = await apiserverWrites(admin);
    const cpuBefore = await cpuSeconds();
    const started = performance.now();
    const names = Array.from({ length: size.requests }, (_, index) => `pod-${index}`);
    await inParallel(names, concurrency, async (name) => {
      await admin.create(`/api/v1/namespaces/${namespace}/pods`, podObject(name));
    });
    // Events are written asynchronously, after the binding: endOfSide gives them a moment.
    const { finished, ms, cpu, ours } = await endOfSide(admin, {
      done: () => bound.size >= size.requests,
      what: 'every pod bound',
      started,
      cpuBefore,
      before,
      keep: (key) => key.includes('pods') || key.includes('events'),
      creates: 'POST pods',
      requests: size.requests,
    });
    return {
      ms,
      done: bound.size,
      perSecond: (bound.size * 1000) / ms,
      writes: ours,
      writesPerItem: totalWrites(ours) / size.requests,
      cpu,
      loadAverage: os.loadavg()[0],
      ...(finished ? {} : { unfinished: true }),
    };
  } finally {
    await pods.stop();
    await stopChild(scheduler, 'SIGTERM');
    // Its Nodes would take the next side's... nothing, but a later scheduler would use them.
    await inParallel(nodes, 20, (name) =>
      admin.delete(`/api/v1/nodes/${name}`).then(() => undefined),
    );
  }
}

// ------------------------------------------------------------------------------------------------
// simlock

function workerScript(name: string, slots: number): HostedWorker {
  return {
    name,
    script: {
      models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
      runtimes: [{ platform: 'ios', version: '18.4' }],
      devices: Array.from({ length: slots }, (_, index) => ({
        id: `${name}-sim-${index}`,
        name: 'iPhone 16',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
        booted: true,
      })),
      bootMs: 0,
    },
    config: { limits: { running: slots, platforms: { ios: { running: slots } } } },
  };
}

async function simlockSide(
  cluster: BenchControlPlane,
  size: Size,
  qps: number,
  dir: string,
  tag: string,
): Promise<SideResult> {
  const { admin, controlPlane } = cluster;
  const systemNamespace = `simlock-${tag}`;
  const namespace = `requests-${tag}`;
  await createNamespace(admin, systemNamespace);
  await createNamespace(admin, namespace);
  // Every worker has room for a fifth more than its share: a grant never waits for a slot.
  const slots = Math.ceil((size.requests / size.workers) * 1.2);
  const workers = Array.from({ length: size.workers }, (_, index) =>
    workerScript(`w-${tag}-${String(index).padStart(4, '0')}`, slots),
  );
  const agentsStarted = performance.now();
  const host = await startAgentHost({
    kubeconfigPath: controlPlane.kubeconfigPath,
    systemNamespace,
    fleetLabel: tag,
    workers,
    agentConfig: {
      heartbeat: { durationSeconds: 600, renewEverySeconds: 150 },
    },
    logPath: join(dir, `agents-${tag}.log`),
    cpuProfileDir: cpuProfile ? dir : undefined,
  });
  log(`  ${size.workers} agents up in ${seconds(performance.now() - agentsStarted)}`);
  const controller = await startController({
    kubeconfigPath: controlPlane.kubeconfigPath,
    systemNamespace,
    watchNamespace: namespace,
    workerSelector: `${FLEET_LABEL}=${tag}`,
    qps,
    burst: qps * 2,
    cpuProfileDir: cpuProfile ? dir : undefined,
    logPath: join(dir, `controller-${tag}.log`),
  });
  // The controller has seen every worker: a request made now can be routed at once.
  await waitUntil(
    async () => {
      const workerList = (await admin.get(simlockPath('worker'), {
        query: { labelSelector: `${FLEET_LABEL}=${tag}` },
      })) as { items: { status?: { health?: string } }[] };
      return (
        workerList.items.filter((worker) => worker.status?.health === 'running').length ===
        size.workers
      );
    },
    120_000,
    'every worker running',
  );

  const granted = new Set<string>();
  const failed = new Set<string>();
  // When each request was first seen in each phase, for the timeline in the JSON.
  const seen = new Map<string, Record<string, number>>();
  const requests = new Informer(admin, { path: simlockPath('leaseRequest', { namespace }) });
  const phaseOf = (object: KubeObject) => (object.status as { phase?: string } | undefined)?.phase;
  requests.on((event) => {
    if (event.type === 'deleted') return;
    const name = event.object.metadata.name;
    const phase = phaseOf(event.object) ?? 'Created';
    const phases = seen.get(name) ?? {};
    phases[phase] ??= performance.now();
    seen.set(name, phases);
    if (phase === 'Granted') granted.add(name);
    if (phase === 'Failed') failed.add(name);
  });
  requests.start();
  await requests.waitForSync();
  try {
    const controllerBefore = await controller.metrics();
    const agentsBefore = await host.writes();
    const before = await apiserverWrites(admin);
    const cpuBefore = await cpuSeconds();
    const started = performance.now();
    const names = Array.from({ length: size.requests }, (_, index) => `lr-${index}`);
    await inParallel(names, concurrency, async (name) => {
      await admin.create(simlockPath('leaseRequest', { namespace }), {
        apiVersion: 'simlock.dev/v1alpha1',
        kind: 'LeaseRequest',
        // As `kubectl simlock lease` makes them: with the controller's release finalizer.
        metadata: { name, finalizers: [REQUEST_FINALIZER] },
        spec: { platform: 'ios', model: 'iPhone 16', holder: 'bench' },
      });
    });
    // The last view writes are debounced by the agents (1 s): endOfSide lets them land.
    const { finished, ms, cpu, ours } = await endOfSide(admin, {
      done: () => granted.size + failed.size >= size.requests,
      what: 'every request granted',
      started,
      cpuBefore,
      before,
      keep: (key) => key.includes('simlock.dev/') || key.includes('events'),
      creates: 'POST simlock.dev/leaserequests',
      requests: size.requests,
    });
    const controllerAfter = await controller.metrics();
    const agentsAfter = await host.writes();
    const clientWrites: Record<string, number> = {
      controller: delta(controllerBefore, controllerAfter, 'simlock_api_writes_total'),
      controllerStatus: delta(controllerBefore, controllerAfter, 'simlock_status_writes_total'),
      controllerWalks: delta(controllerBefore, controllerAfter, 'simlock_walks_total'),
      controllerWalkSeconds: delta(
        controllerBefore,
        controllerAfter,
        'simlock_walk_duration_seconds_sum',
      ),
      agents:
        Object.values(agentsAfter).reduce((sum, value) => sum + value, 0) -
        Object.values(agentsBefore).reduce((sum, value) => sum + value, 0),
    };
    const phases = [...seen.values()];
    const after = (from: string, to: string) =>
      phases.flatMap((entry) =>
        entry[from] !== undefined && entry[to] !== undefined ? [entry[to] - entry[from]] : [],
      );
    if (process.env.BENCH_TIMELINE) {
      await writeFile(
        join(dir, `timeline-${tag}.json`),
        JSON.stringify(
          [...seen].map(([name, entry]) => [
            name,
            Object.fromEntries(
              Object.entries(entry).map(([phase, at]) => [phase, Math.round(at - started)]),
            ),
          ]),
        ),
      );
    }
    const timeline = {
      waited: phases.filter((entry) => entry.Waiting !== undefined).length,
      createdToGrantedP50Ms: percentile(after('Created', 'Granted'), 50),
      createdToGrantedP99Ms: percentile(after('Created', 'Granted'), 99),
      // Only requests seen Dispatched (a status written when the grant took over a second).
      dispatchedSamples: after('Dispatched', 'Granted').length,
      dispatchedToGrantedP50Ms:
        after('Dispatched', 'Granted').length > 0
          ? percentile(after('Dispatched', 'Granted'), 50)
          : null,
      dispatchedToGrantedP99Ms:
        after('Dispatched', 'Granted').length > 0
          ? percentile(after('Dispatched', 'Granted'), 99)
          : null,
      lastCreatedMs: Math.max(...phases.map((entry) => (entry.Created ?? started) - started)),
    };
    return {
      ms,
      done: granted.size,
      failed: failed.size,
      timeline,
      perSecond: (granted.size * 1000) / ms,
      writes: ours,
      writesPerItem: totalWrites(ours) / size.requests,
      clientWrites,
      cpu,
      loadAverage: os.loadavg()[0],
      ...(finished ? {} : { unfinished: true }),
    };
  } finally {
    await requests.stop();
    await controller.stop();
    await host.stop();
  }
}

function delta(before: Record<string, number>, after: Record<string, number>, name: string) {
  return (after[name] ?? 0) - (before[name] ?? 0);
}

/**
 * The end of one side: waits until it is done (or its timeout), takes its time and CPU, gives the
 * writes that trail the last item 1.5 s to land, and counts the side's own writes (the benchmark's
 * creates left out).
 */
async function endOfSide(
  admin: KubeClient,
  side: {
    done: () => boolean;
    what: string;
    started: number;
    cpuBefore: Record<string, number>;
    before: WriteCounts;
    keep: (key: string) => boolean;
    creates: string;
    requests: number;
  },
): Promise<{ finished: boolean; ms: number; cpu: Record<string, number>; ours: WriteCounts }> {
  const finished = await waitUntil(side.done, sideTimeoutMs, side.what, 20).then(
    () => true,
    () => false,
  );
  const ms = performance.now() - side.started;
  const cpu = cpuBetween(side.cpuBefore, await cpuSeconds());
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const writes = writesBetween(side.before, await apiserverWrites(admin));
  const ours = withoutCreates(filterWrites(writes, side.keep), side.creates, side.requests);
  return { finished, ms, cpu, ours };
}

function filterWrites(counts: WriteCounts, keep: (key: string) => boolean): WriteCounts {
  return Object.fromEntries(Object.entries(counts).filter(([key]) => keep(key)));
}

/** Leaves out the benchmark's own creates. */
function withoutCreates(counts: WriteCounts, key: string, creates: number): WriteCounts {
  const rest = { ...counts };
  const left = (rest[key] ?? 0) - creates;
  if (left > 0) rest[key] = left;
  else delete rest[key];
  return rest;
}

// ------------------------------------------------------------------------------------------------

async function oneRun(size: Size, qps: number, run: number, dir: string): Promise<RunResult> {
  const result: RunResult = { size, qps, run };
  const cluster = await startBenchControlPlane();
  const tag = `${size.workers}x${size.requests}-q${qps}-r${run}`;
  try {
    if (sides.has('scheduler')) {
      log(`${tag}: kube-scheduler`);
      result.scheduler = await schedulerSide(cluster, size, qps, dir, tag);
      log(`  ${describe(result.scheduler, 'binds')}`);
    }
    if (sides.has('simlock')) {
      log(`${tag}: simlock`);
      result.simlock = await simlockSide(cluster, size, qps, dir, tag);
      log(`  ${describe(result.simlock, 'grants')}`);
    }
  } finally {
    if (line.has('--keep')) log(`control plane kept at ${cluster.controlPlane.dir}`);
    else await cluster.stop();
  }
  return result;
}

function describe(side: SideResult, what: string): string {
  return `${side.done} ${what} in ${seconds(side.ms)}: ${side.perSecond.toFixed(1)}/s, ${side.writesPerItem.toFixed(2)} writes each${side.failed ? `, ${side.failed} failed` : ''}${side.unfinished ? ' (UNFINISHED: timed out)' : ''}; load average ${side.loadAverage?.toFixed(1) ?? '?'}`;
}

interface Row {
  size: Size;
  qps: number;
  runs: number;
  grantsPerSecond?: number;
  bindsPerSecond?: number;
  ratio?: number;
  writesPerGrant?: number;
  writesPerBind?: number;
  /** kube-apiserver CPU milliseconds per grant and per bind (the steadiest figure here). */
  apiserverMsPerGrant?: number;
  apiserverMsPerBind?: number;
}

/** kube-apiserver CPU per item of one side, in milliseconds. */
function apiserverMsPerItem(side: { cpu?: Record<string, number>; done: number }): number {
  return ((side.cpu?.['kube-apiserver'] ?? Number.NaN) * 1000) / side.done;
}

function summarize(results: RunResult[]): Row[] {
  const rows: Row[] = [];
  for (const size of sizes) {
    for (const qps of qpsList) {
      const mine = results.filter(
        (result) =>
          result.size.workers === size.workers &&
          result.size.requests === size.requests &&
          result.qps === qps,
      );
      const grants = mine.flatMap((result) => (result.simlock ? [result.simlock] : []));
      const binds = mine.flatMap((result) => (result.scheduler ? [result.scheduler] : []));
      const row: Row = { size, qps, runs: mine.length };
      if (grants.length > 0) {
        row.grantsPerSecond = median(grants.map((side) => side.perSecond));
        row.writesPerGrant = median(grants.map((side) => side.writesPerItem));
        row.apiserverMsPerGrant = median(grants.map(apiserverMsPerItem));
      }
      if (binds.length > 0) {
        row.bindsPerSecond = median(binds.map((side) => side.perSecond));
        row.writesPerBind = median(binds.map((side) => side.writesPerItem));
        row.apiserverMsPerBind = median(binds.map(apiserverMsPerItem));
      }
      if (row.grantsPerSecond !== undefined && row.bindsPerSecond)
        row.ratio = row.grantsPerSecond / row.bindsPerSecond;
      rows.push(row);
    }
  }
  return rows;
}

function printTable(rows: Row[]): void {
  const cell = (value: number | undefined, digits = 1) =>
    (value === undefined ? '-' : value.toFixed(digits)).padStart(9);
  console.log(
    `${'W×N'.padEnd(11)}${'QPS'.padStart(6)}${'grants/s'.padStart(10)}${'binds/s'.padStart(10)}${'ratio'.padStart(9)}${'wr/grant'.padStart(10)}${'wr/bind'.padStart(9)}${'apiserver ms/grant'.padStart(20)}${'ms/bind'.padStart(9)}`,
  );
  for (const row of rows) {
    console.log(
      `${`${row.size.workers}×${row.size.requests}`.padEnd(11)}${(row.qps === 0 ? 'none' : String(row.qps)).padStart(6)} ${cell(row.grantsPerSecond)} ${cell(row.bindsPerSecond)}${cell(row.ratio, 2)} ${cell(row.writesPerGrant, 2)}${cell(row.writesPerBind, 2)}${cell(row.apiserverMsPerGrant).padStart(20)}${cell(row.apiserverMsPerBind)}`,
    );
  }
}

const dir = await outDir('grants-vs-binds');
const results: RunResult[] = [];
for (const size of sizes) {
  for (const qps of qpsList) {
    for (let run = 0; run < runs; run++) {
      results.push(await oneRun(size, qps, run, dir));
    }
  }
}
const rows = summarize(results);
console.log(
  `grants vs binds: medians of ${runs} run(s); machine: ${machineName()} (${cpuCount()} CPUs, shared by etcd, kube-apiserver, the controller or kube-scheduler, the agents and this program)`,
);
printTable(rows);
if (jsonPath !== undefined || line.has('--json')) {
  const path = jsonPath ?? join(dir, 'results.json');
  await writeFile(
    path,
    JSON.stringify(
      { machine: machineName(), cpus: cpuCount(), runs, concurrency, rows, results },
      null,
      2,
    ),
  );
  console.log(`results written to ${path}`);
}
// Informers and the HTTPS pool may hold the loop open: the figures are out, so end.
process.exit(0);
