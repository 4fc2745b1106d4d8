// Half an hour of faults (issue 19): a control plane of its own, fake-driver agents as real
// processes, two controller replicas with leader election, the exec proxy, and a steady load of
// requests granted, exec'd once and released, while the leader is SIGKILLed every ~2 minutes, an
// agent every ~3, an agent is cut off from the API server for a minute several times (a network
// namespace of the benchmark's own: test/cluster/partition.ts), and etcd and kube-apiserver are
// restarted once each. It prints its figures and every invariant with its count of violations.
// The soak's own writes (its requests' creates and deletes) are tried until they succeed; one it
// gives up, or a fault it could not make (etcd or kube-apiserver not back after a restart, a
// network namespace not cut or healed), is the harness's failure, listed apart from the invariants. Exit code: 1 when an
// invariant was violated, else 2 when the harness failed (the verdicts may miss a check), else 0.
//
//   node --import tsx bench/soak.ts [--minutes 30] [--agents 50] [--rate 380]
//        [--partition-seconds 60] [--outstanding 1] [--json [FILE]]
//        [--faults leader,agent,partition,etcd,apiserver] [--etcd-restarts 1] [--log-level warn]
//        [--audit] [--heap-snapshots]
// --faults and --etcd-restarts narrow a run down to one kind of fault (e.g. `--faults etcd
// --etcd-restarts 4` for what an etcd restart does); --log-level info logs every grant and answer
// of the controllers and agents (agent-NAME.log, controllers.log in the run's folder);
// --heap-snapshots writes the measured agent's heap at minute 5, at minute 30 of a longer run, and
// at the end into that folder (compare them with bench/heap-summary.ts).
import os from 'node:os';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLEET_LABEL, Replicas, pairAddresses, partitionsUnavailable } from '../test/index.js';
import {
  CommandLine,
  apiserverWrites,
  createNamespace,
  log,
  machineName,
  median,
  outDir,
  parseMetrics,
  percentile,
  startBenchControlPlane,
  totalWrites,
  waitUntil,
  type WriteCounts,
} from './harness/index.js';
import { CpuSampler } from './soak/cpu.js';
import { heapAfterCollection, writeHeapSnapshot } from './soak/inspector.js';
import { FAULT_KINDS, SoakFaults, faultKinds, logLevel } from './soak/faults.js';
import { invariants, latencyBy, minutes, reroutes } from './soak/figures.js';
import {
  FLEET,
  NAMESPACE,
  PARTITIONED_AGENTS,
  SYSTEM_NAMESPACE,
  startSoakFleet,
} from './soak/fleet.js';
import { HarnessWrites } from './soak/harness-writes.js';
import { OUTSTANDING_PER_AGENT, SoakLoad } from './soak/load.js';
import { SoakWatch } from './soak/watch.js';

const args = new CommandLine();
args.only([
  '--minutes',
  '--agents',
  '--rate',
  '--partition-seconds',
  '--json',
  '--faults',
  '--etcd-restarts',
  '--log-level',
  '--audit',
  '--outstanding',
  '--heap-snapshots',
]);
const MINUTES = args.integer('--minutes', 30);
const AGENTS = args.integer('--agents', 50, 6);
const RATE = args.integer('--rate', 380);
const OUTSTANDING = args.integer('--outstanding', OUTSTANDING_PER_AGENT, 1);
const PARTITION_MS = args.integer('--partition-seconds', 60) * 1000;
const FAULTS = faultKinds(args.list('--faults') ?? [...FAULT_KINDS]);
const ETCD_RESTARTS = args.integer('--etcd-restarts', 1);
const LOG_LEVEL = logLevel(args.string('--log-level') ?? 'warn');
const HEAP_SNAPSHOTS = args.has('--heap-snapshots');
const JSON_PATH = args.has('--json')
  ? (args.optionalValue('--json') ?? join('bench', 'out', 'soak.json'))
  : undefined;

const unavailable = await partitionsUnavailable();
if (unavailable) throw new Error(`the soak cuts agents off: ${unavailable}`);
const dir = await outDir('soak');
log(`soak: ${MINUTES} min, ${AGENTS} agents, ${RATE} requests/min; logs in ${dir}`);

const bench = await startBenchControlPlane({
  servingAddresses: Array.from({ length: PARTITIONED_AGENTS }, (_, i) => pairAddresses(i).host),
  // --audit: kube-apiserver logs every write of a Lease or a request (audit.log in the run's folder).
  ...(args.has('--audit')
    ? {
        auditWrites: {
          path: join(dir, 'audit.log'),
          resources: ['simlock.dev/leases', 'simlock.dev/leaserequests'],
        },
      }
    : {}),
});
const { controlPlane, admin } = bench;
for (const name of [NAMESPACE, SYSTEM_NAMESPACE]) await createNamespace(admin, name);
const fleet = await startSoakFleet({
  admin,
  kubeconfigPath: controlPlane.kubeconfigPath,
  apiServerPort: Number(new URL(controlPlane.server).port),
  agents: AGENTS,
  dir,
  logLevel: LOG_LEVEL,
});
log(`${fleet.agents.length} agents running`);
// Production's settings: a 15 s leader lease, a 10 s dispatch timeout, reasons once a second.
const replicas = new Replicas({
  kubeconfigPath: () => controlPlane.kubeconfigPath,
  systemNamespace: SYSTEM_NAMESPACE,
  watchNamespace: NAMESPACE,
  workerSelector: `${FLEET_LABEL}=${FLEET}`,
  logPath: join(dir, 'controllers.log'),
  logLevel: LOG_LEVEL,
  inspect: true,
});
await replicas.start(2);
await waitUntil(async () => (await replicas.leader()) !== undefined, 120_000, 'a leader');
const watch = new SoakWatch(admin);
await watch.start();
const harness = new HarnessWrites({ log });
const load = new SoakLoad({
  admin,
  harness,
  watch,
  proxyUrl: fleet.proxyUrl,
  userToken: fleet.userToken,
  perMinute: RATE,
  agents: AGENTS,
  outstandingPerAgent: OUTSTANDING,
});
const measured = fleet.agents[fleet.agents.length - 1];
if (!measured) throw new Error('no agents');
const faults = new SoakFaults({
  controlPlane,
  replicas,
  agents: fleet.agents,
  watch,
  load,
  harness,
  measured,
});

// --- memory and load average, once a minute ---------------------------------------------------
interface MemorySample {
  minute: number;
  process: string;
  rssMb: number;
  heapMb: number;
  /** Heap used right after a full collection: what the process keeps (controller and agent). */
  keptHeapMb?: number;
}
const memory: MemorySample[] = [];
const loadAverages: number[] = [];
const sampleMemory = async (minute: number) => {
  loadAverages.push(os.loadavg()[0] ?? 0);
  const leader = await replicas.leader();
  const endpoint = (await measured.process.status())?.endpoint;
  const targets: [string, string | undefined, number | undefined][] = [
    [
      `controller ${leader?.identity ?? '-'}`,
      leader ? `${leader.url}/metrics` : undefined,
      leader?.inspectorPort,
    ],
    [
      `agent ${measured.process.name}`,
      endpoint ? new URL('/metrics', endpoint).href : undefined,
      measured.inspectorPort,
    ],
    ['proxy', `${fleet.proxyUrl}/metrics`, undefined],
  ];
  for (const [name, url, inspected] of targets) {
    if (!url) continue;
    try {
      const values = parseMetrics(await (await fetch(url)).text());
      memory.push({
        minute,
        process: name,
        rssMb: (values.process_resident_memory_bytes ?? 0) / 2 ** 20,
        heapMb: (values.nodejs_heap_size_used_bytes ?? 0) / 2 ** 20,
        ...(inspected ? { keptHeapMb: (await heapAfterCollection(inspected)) / 2 ** 20 } : {}),
      });
    } catch (error) {
      log(`memory of ${name} not read: ${(error as Error).message}`); // restarting, most likely
    }
  }
};
const snapshotHeap = async (label: string) => {
  if (!HEAP_SNAPSHOTS || !measured.inspectorPort) return;
  const path = join(dir, `agent-${measured.process.name}-${label}.heapsnapshot`);
  await writeHeapSnapshot(measured.inspectorPort, path).then(
    () => log(`heap snapshot of ${measured.process.name}: ${path}`),
    (error: Error) => log(`heap snapshot of ${measured.process.name} failed: ${error.message}`),
  );
};

// --- API writes: kube-apiserver's counters start again from 0 when it restarts, so they are read
// every 10 s and added up (a restart loses at most the writes of the 10 s before it) --------------
const writes: WriteCounts = {};
let lastWrites = await apiserverWrites(admin);
const addWrites = async () => {
  const now = await apiserverWrites(admin).catch(() => undefined);
  if (!now) return;
  for (const [key, value] of Object.entries(now)) {
    const before = lastWrites[key] ?? 0;
    const delta = value >= before ? value - before : value;
    if (delta > 0) writes[key] = (writes[key] ?? 0) + delta;
  }
  lastWrites = now;
};
const writeSampler = setInterval(() => void addWrites(), 10_000);

// --- the run ------------------------------------------------------------------------------------
const cpu = new CpuSampler();
await cpu.sample();
const cpuAtStart = cpu.totals();
cpu.start();
const started = Date.now();
load.start();
await sampleMemory(0);
let minute = 0;
/** Once a minute, so that half an hour is not silent: how far the load got, and the faults so far. */
const progress = (at: number) => {
  const records = [...watch.records.values()];
  const granted = records.filter((record) => record.outcomes.has('granted')).length;
  const failed = records.filter((record) =>
    [...record.outcomes].some((outcome) => outcome.startsWith('failed')),
  ).length;
  log(
    `minute ${at}: ${records.length} requests, ${granted} granted, ${failed} failed; ` +
      `${faults.windows.length} faults; ${watch.doubleGrants.length} double grants seen; ` +
      `load ${(os.loadavg()[0] ?? 0).toFixed(1)}`,
  );
};
const sampler = setInterval(() => {
  minute++;
  progress(minute);
  // A run longer than the half hour also shows how the heap moves after minute 30 (does it level off?).
  const label = minute === 5 || (minute === 30 && MINUTES > 30) ? `minute-${minute}` : undefined;
  void sampleMemory(minute).then(() => (label ? snapshotHeap(label) : undefined));
}, 60_000);
await faults.run(started, MINUTES * 60_000, PARTITION_MS, {
  kinds: FAULTS,
  etcdRestarts: ETCD_RESTARTS,
});
const remaining = started + MINUTES * 60_000 - Date.now();
if (remaining > 0) await new Promise((resolve) => setTimeout(resolve, remaining));
const loadEnded = Date.now();
await cpu.stop();
const cpuDuringLoad = [...cpu.totals()]
  .map(([role, seconds]) => [role, seconds - (cpuAtStart.get(role) ?? 0)] as const)
  .sort(([, a], [, b]) => b - a);
log('load stops; letting every request end');
const leftOver = await load.drain(180_000);
clearInterval(sampler);
await sampleMemory(minute + 1);
await snapshotHeap('end');
clearInterval(writeSampler);
await addWrites();
await watch.stop();

// --- figures -----------------------------------------------------------------------------------
const byMinute = minutes(watch, faults.windows, started);
const { calm, fault } = latencyBy(watch, faults.windows, started);
const routes = reroutes(watch.records, faults.partitions);
const verdicts = invariants(watch, faults, routes, leftOver);
const granted = [...watch.records.values()].filter((record) => record.grantedAt !== undefined);
const failures = new Map<string, number>();
for (const record of watch.records.values())
  for (const outcome of record.outcomes)
    if (outcome.startsWith('failed:')) failures.set(outcome, (failures.get(outcome) ?? 0) + 1);
const allWrites = totalWrites(writes);
const heartbeatWrites = totalWrites(writes, (key) => key.includes('coordination.k8s.io/leases'));
const runMinutes = (loadEnded - started) / 60_000;
const memoryOf = (prefix: string) => memory.filter((sample) => sample.process.startsWith(prefix));
const growth = (
  samples: MemorySample[],
  key: 'rssMb' | 'heapMb' | 'keptHeapMb',
  fromMinute = 5,
) => {
  const from = samples.find((sample) => sample.minute >= fromMinute) ?? samples[0];
  const to = samples.at(-1);
  const [a, b] = [from?.[key] ?? 0, to?.[key] ?? 0];
  return a > 0 ? ((b - a) / a) * 100 : 0;
};

const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const lines = [
  `soak: ${MINUTES} min asked, ${runMinutes.toFixed(1)} min of load, ${AGENTS} agents, 2 controller replicas; ${machineName()}`,
  `load average (1 min) during the run: min ${Math.min(...loadAverages).toFixed(1)}, median ${median(loadAverages).toFixed(1)}, max ${Math.max(...loadAverages).toFixed(1)}`,
  `requests created ${watch.records.size} (create tries that failed ${load.createErrors}${createErrorReasons(load.createErrorReasons)}); leases granted ${granted.length} (${(granted.length / runMinutes).toFixed(0)} per minute)`,
  `failed: ${[...failures].map(([code, count]) => `${code.slice(7)} ${count}`).join(', ') || 'none'}`,
  `execs through the proxy: ${[...load.execs].map(([outcome, count]) => `${outcome} ${count}`).join(', ')} (tried again after UNAVAILABLE: ${load.execRetries})`,
  `grant latency (iPhone and physical), calm minutes: p50 ${fmt(percentile(calm, 50))}, p99 ${fmt(percentile(calm, 99))} (${calm.length}); fault minutes: p50 ${fmt(percentile(fault, 50))}, p99 ${fmt(percentile(fault, 99))} (${fault.length})`,
  `time to a new leader (${faults.failoversMs.length} kills): median ${fmt(median(faults.failoversMs))}, max ${fmt(Math.max(0, ...faults.failoversMs))}`,
  `agent killed to running again (${faults.agentRestartsMs.length}): median ${fmt(median(faults.agentRestartsMs))}, max ${fmt(Math.max(0, ...faults.agentRestartsMs))}`,
  `etcd and kube-apiserver restarted, stop to ready: ${faults.restarts.map(({ kind, ms }) => `${kind} ${fmt(ms)}`).join(', ') || 'none'}`,
  ...faults.partitions.map((partition, index) => {
    const route = routes[index];
    return `partition of ${partition.worker} at ${new Date(partition.cutAt).toISOString().slice(11, 19)} for ${fmt(partition.healedAt - partition.cutAt)}: disconnected after ${partition.detectedMs === undefined ? 'never' : fmt(partition.detectedMs)}; ${route?.reroutesMs.length ?? 0} dispatched to it re-routed, last after ${fmt(route?.reroutesMs.at(-1) ?? 0)}${route?.grantedAsCut.length ? `, ${route.grantedAsCut.length} granted there as the cut began (${route.grantedAsCut.join(', ')})` : ''}; released one reclaimed ${String(partition.reclaimed)}, held one kept ${String(partition.kept)}`;
  }),
  `reasons converged after faults: ${faults.convergence.map((entry) => (entry.ms !== undefined ? fmt(entry.ms) : 'NO')).join(', ')}`,
  ...['controller', 'agent', 'proxy'].map((prefix) => {
    const samples = memoryOf(prefix);
    const first = samples[0];
    const last = samples.at(-1);
    const kept =
      first?.keptHeapMb !== undefined
        ? `; heap kept after a full collection ${first.keptHeapMb.toFixed(1)} → ${last?.keptHeapMb?.toFixed(1)} MiB, from minute 5 ${growth(samples, 'keptHeapMb').toFixed(1)} %${MINUTES > 30 ? `, from minute 30 ${growth(samples, 'keptHeapMb', 30).toFixed(1)} %` : ''}`
        : '';
    // Growth means something only for one process: a killed leader's successor starts afresh.
    const lives = new Set(samples.map((sample) => sample.process)).size;
    const snapshots = prefix === 'agent' && HEAP_SNAPSHOTS ? ' (RSS holds the heap snapshots)' : '';
    return `${prefix} (${lives === 1 ? 'one process' : `${lives} processes in turn`}): RSS ${first?.rssMb.toFixed(0)} → ${last?.rssMb.toFixed(0)} MiB, heap ${first?.heapMb.toFixed(0)} → ${last?.heapMb.toFixed(0)} MiB; from minute 5: RSS ${growth(samples, 'rssMb').toFixed(1)} %${snapshots}, heap ${growth(samples, 'heapMb').toFixed(1)} %${kept}`;
  }),
  `API writes by kind: ${Object.entries(writes)
    .sort(([, a], [, b]) => b - a)
    .slice(0, 8)
    .map(([key, count]) => `${key} ${(count / Math.max(1, granted.length)).toFixed(1)}`)
    .join(', ')} (per lease)`,
  `CPU during the load (cores on average, of ${os.cpus().length}): ${cpuDuringLoad
    .map(([role, seconds]) => `${role} ${(seconds / ((loadEnded - started) / 1000)).toFixed(2)}`)
    .join(', ')}`,
  `API writes: ${allWrites} (${(allWrites / Math.max(1, granted.length)).toFixed(1)} per lease; without heartbeats ${((allWrites - heartbeatWrites) / Math.max(1, granted.length)).toFixed(1)})`,
  '',
  'minute  grants  kind   p50      p99',
  ...byMinute.map(
    (entry) =>
      `${String(entry.minute).padStart(6)}  ${String(entry.grants).padStart(6)}  ${entry.fault ? 'fault' : 'calm '}  ${fmt(entry.p50Ms).padStart(7)}  ${fmt(entry.p99Ms).padStart(7)}`,
  ),
  '',
  'invariants (violations):',
  ...verdicts.flatMap((verdict) => [
    `  ${String(verdict.violations).padStart(4)}  ${verdict.name}`,
    ...verdict.examples.map((example) => `          ${example}`),
  ]),
  '',
  `the harness's own writes and faults: ${harness.retries} tries made again; failures (the harness's, not the product's): ${harness.failures.length}`,
  ...harness.failures.slice(0, 10).map((failure) => `          ${failure}`),
];
process.stdout.write(`${lines.join('\n')}\n`);

if (JSON_PATH) {
  await writeFile(
    JSON_PATH,
    JSON.stringify(
      {
        machine: machineName(),
        options: { minutes: MINUTES, agents: AGENTS, rate: RATE, partitionMs: PARTITION_MS },
        loadAverages,
        created: watch.records.size,
        granted: granted.length,
        failures: Object.fromEntries(failures),
        execs: Object.fromEntries(load.execs),
        latency: { calm, fault },
        minutes: byMinute,
        failoversMs: faults.failoversMs,
        agentRestartsMs: faults.agentRestartsMs,
        restarts: faults.restarts,
        partitions: faults.partitions,
        reroutes: routes,
        convergence: faults.convergence,
        memory,
        writes,
        cpuSecondsDuringLoad: Object.fromEntries(cpuDuringLoad),
        invariants: verdicts,
        harness: { retries: harness.retries, failures: harness.failures },
      },
      null,
      2,
    ),
  );
  log(`figures in ${JSON_PATH}`);
}

replicas.stop();
await fleet.stop();
// The control plane's folder goes with it: its logs are kept with the run's (a restart's story).
for (const file of ['kube-apiserver.log', 'etcd.log'])
  await copyFile(join(controlPlane.dir, file), join(dir, file)).catch(() => undefined);
await bench.stop();
process.exit(
  verdicts.some((verdict) => verdict.violations > 0) ? 1 : harness.failures.length > 0 ? 2 : 0,
);

/** ": 3 × 503 ServiceUnavailable, …", the commonest first; nothing when no create failed. */
function createErrorReasons(reasons: ReadonlyMap<string, number>): string {
  const listed = [...reasons].sort((a, b) => b[1] - a[1]).map(([why, n]) => `${n} × ${why}`);
  return listed.length ? `: ${listed.join(', ')}` : '';
}
