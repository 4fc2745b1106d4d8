// Grants against binds and against the peers that do the same job, on the same control plane with
// the same client rate limits: how fast the simlock controller and its agents grant N
// LeaseRequests on W workers, next to kube-scheduler binding N pods onto W Nodes (the ceiling),
// kube-scheduler allocating N DRA devices (with and without the claim's finalizer preset), kwok
// taking N pods to Running, and Kueue admitting N Workloads. Prints each side's rate, grants/s
// over each, the API writes and kube-apiserver CPU per item, medians of several runs, and names
// the machine.
//
//   node --import tsx bench/grants-vs-binds.ts [--sizes 10x200,100x2000,1000x5000] [--runs 3]
//     [--qps 0,100,50] [--sides scheduler,dra,dra-preset-finalizer,kwok,kueue,simlock]
//     [--concurrency 32] [--timeout-s 600] [--json [FILE]] [--cpu-prof] [--keep]
//     [--apiserver-profile-s SECONDS [--apiserver-profile-after-s SECONDS]]
//     [--controller-args NAME=VALUE,...] [--idle-s SECONDS]
//
// Each run starts a control plane of its own (etcd, kube-apiserver, the CRDs) and measures the
// sides one after the other on it. Each side's clock runs from the first create to the last item
// done; the creates go through one unthrottled client, C at a time, alike for every side. `--qps
// 50` gives the controller and kube-scheduler 50 requests/s, burst 100 (kube-scheduler's
// defaults); 0 is unthrottled. Agents and kwok (the node agents) are not throttled. Kueue runs in
// the QPS 50 rows only: its client is fixed there.
//
// Writes are counted by the API server (apiserver_request_total, before and after), the N creates
// by the benchmark itself left out. Heartbeats are not counted: the agents renew every 150 s here
// and kwok runs without node Leases. Also recorded per run (JSON): CPU seconds of every process,
// the controller's own counters, and for simlock when each request was first seen Waiting,
// Dispatched and Granted. `--cpu-prof` writes V8 profiles of the controller and the agents to
// bench/out/grants-vs-binds/ (read them with bench/profile-summary.ts);
// `--apiserver-profile-s` takes a Go CPU profile of kube-apiserver during each simlock side (read
// it with `go tool pprof -top`), from its clock's start or `--apiserver-profile-after-s` later;
// `--keep` leaves the last control plane running for a look;
// `--controller-args dispatch-event-hold-ms=1000` adds flags to the controller's command line (a
// setting's before and after in one program); `--idle-s 20` lets each side's stage, up and warmed,
// stand idle that long before its clock and prints what each process spent a second meanwhile
// (the fleet's own cost, beside what the items cost).
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  cpuCount,
  log,
  machineName,
  outDir,
  seconds,
  startBenchControlPlane,
  totalWrites,
} from '../harness/index.js';
import { bindsSide } from './binds.js';
import { draSide } from './dra.js';
import { kueueSide } from './kueue.js';
import { kwokSide } from './kwok.js';
import { apiserverMsPerItem, type SideContext, type SideResult } from './measure.js';
import { KUEUE_QPS, SIDES, parseOptions, type Options, type SideName } from './options.js';
import { simlockSide } from './simlock.js';
import { printTables, summarize, type RunResult } from './summary.js';

/** Each side, and the suffix its names carry (two sides of a run must not share a Node's name). */
const RUNNERS: Record<
  SideName,
  { suffix: string; run: (context: SideContext) => Promise<SideResult> }
> = {
  scheduler: { suffix: '', run: bindsSide },
  dra: { suffix: '-dra', run: (context) => draSide(context, false) },
  'dra-preset-finalizer': { suffix: '-drap', run: (context) => draSide(context, true) },
  kwok: { suffix: '-kwok', run: kwokSide },
  kueue: { suffix: '-kueue', run: kueueSide },
  simlock: { suffix: '', run: simlockSide },
};

function describe(side: SideResult): string {
  // simlock's Leases are deleted in a run only when a dispatch is withdrawn (nothing is released).
  const withdrawn = side.writes['DELETE simlock.dev/leases'] ?? 0;
  const refused = Object.entries(side.writes)
    .filter(([key]) => / \d{3}$/.test(key))
    .reduce((sum, [, count]) => sum + count, 0);
  const extra = [
    side.failed ? `${side.failed} failed` : '',
    withdrawn ? `${withdrawn} dispatches withdrawn` : '',
    refused ? `${refused} writes refused` : '',
    side.doubleAllocations !== undefined ? `${side.doubleAllocations} devices allocated twice` : '',
    side.unfinished ? 'UNFINISHED: timed out' : '',
    side.watchersClosed
      ? `watchers closed as unresponsive: ${Object.entries(side.watchersClosed)
          .map(([resource, count]) => `${count} ${resource}`)
          .join(', ')}`
      : '',
    side.controllerLoopLagMaxMs !== undefined
      ? `the controller's event loop held up to ${side.controllerLoopLagMaxMs} ms`
      : '',
    side.idle
      ? `idle before it: ${Object.entries(side.idle.cpuMsPerSecond)
          .map(([process, ms]) => `${process} ${ms} ms/s`)
          .join(', ')}, ${(totalWrites(side.idle.writes) / side.idle.seconds).toFixed(1)} writes/s`
      : '',
  ].filter(Boolean);
  return `${side.done} in ${seconds(side.ms)}: ${side.perSecond.toFixed(1)}/s, ${side.writesPerItem.toFixed(2)} writes and ${apiserverMsPerItem(side).toFixed(1)} ms of kube-apiserver CPU each${extra.length ? `, ${extra.join(', ')}` : ''}; load average ${side.loadAverage?.toFixed(1) ?? '?'}`;
}

/**
 * One run: a control plane and the wanted sides on it, filling in `result`. `afterSide` is called
 * after each side (the JSON is written then), so a run stopped half-way keeps the sides it finished.
 */
async function oneRun(
  options: Options,
  result: RunResult,
  dir: string,
  afterSide: () => Promise<void>,
): Promise<void> {
  const { size, qps, run } = result;
  const wanted = SIDES.filter(
    (name) => options.sides.has(name) && (name !== 'kueue' || qps === KUEUE_QPS),
  );
  if (wanted.length === 0) return;
  const cluster = await startBenchControlPlane();
  const tag = `${size.workers}x${size.requests}-q${qps}-r${run}`;
  try {
    for (const name of wanted) {
      const runner = RUNNERS[name];
      log(`${tag}: ${name}`);
      // A side that fails (a peer that cannot start here) is reported; the others still run.
      try {
        const side = await runner.run({
          cluster,
          size,
          qps,
          dir,
          tag: `${tag}${runner.suffix}`,
          options,
        });
        result.sides[name] = side;
        log(`  ${describe(side)}`);
      } catch (error) {
        result.failures = { ...result.failures, [name]: String(error) };
        log(`  ${name} FAILED: ${String(error)}`);
      }
      await afterSide();
    }
  } finally {
    if (options.keep) log(`control plane kept at ${cluster.controlPlane.dir}`);
    else await cluster.stop();
  }
}

export async function main(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const options = parseOptions(argv);
  if (options.sides.has('kueue') && !options.qpsList.includes(KUEUE_QPS))
    log(`kueue runs only at QPS ${KUEUE_QPS} (its client is fixed there): add it to --qps`);
  const dir = await outDir('grants-vs-binds');
  const results: RunResult[] = [];
  const jsonPath = options.json ? (options.jsonPath ?? join(dir, 'results.json')) : undefined;
  // Written after every side too: a long benchmark stopped half-way keeps what it measured. Through
  // a file beside it and a rename, so a stop in the middle of a write leaves the last whole file.
  const save = async () => {
    if (jsonPath === undefined) return;
    const rows = summarize(results, options.sizes, options.qpsList);
    const partPath = `${jsonPath}.part`;
    await writeFile(
      partPath,
      JSON.stringify(
        {
          machine: machineName(),
          cpus: cpuCount(),
          runs: options.runs,
          concurrency: options.concurrency,
          rows,
          results,
        },
        null,
        2,
      ),
    );
    await rename(partPath, jsonPath);
  };
  for (const size of options.sizes)
    for (const qps of options.qpsList)
      for (let run = 0; run < options.runs; run++) {
        const result: RunResult = { size, qps, run, sides: {} };
        results.push(result);
        await oneRun(options, result, dir, save);
      }
  await save();
  console.log(
    `grants vs binds and peers: medians of ${options.runs} run(s); machine: ${machineName()} (${cpuCount()} CPUs, shared by etcd, kube-apiserver, the side's processes and this program)`,
  );
  printTables(summarize(results, options.sizes, options.qpsList));
  if (jsonPath !== undefined) console.log(`results written to ${jsonPath}`);
}
