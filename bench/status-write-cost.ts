// What the LeaseRequest CRD costs kube-apiserver per status write: its CEL rules, and status.workers
// as an atomic list or a list-map. kube-apiserver evaluates every rule of the object on a status
// update (ratcheting only forgives errors on unchanged values), so the rule on each status.workers
// item runs once per worker on every write of a waiting request; and managed fields track each
// entry of a list-map. On a control plane of its own, the CRD is put in force in turn as generated
// (crds/), without the status item rule (no-status-cel), without any rule (no-cel), with
// status.workers a list-map keyed by worker as before ADR 0017 (map-workers), and with a
// status.workerGroups added that holds the same reasons grouped by reason, written instead of
// status.workers (grouped-workers, a form weighed in issue 36). For each the same status PUTs are
// made: waiting-W (N requests, K Waiting statuses of W reasons each), granted (one Granted
// status each) and granted-over-W (one Granted status each over the Waiting status of W reasons
// the controller writes: what a grant costs after a wait). kube-apiserver's CPU per write, from /proc, is the figure; generated − a variant
// is what the variant's change saves. Variants alternate within a run (their order turns from run
// to run). Each workload is measured bare and, with `--surroundings bare,standing,watched,loaded`,
// also among standing requests, watchers, or both (status-write-cost/surroundings.ts; named
// "… standing" and so on), these alternating too. Prints; asserts nothing.
//
//   node --import tsx bench/status-write-cost.ts [--requests 500] [--writes-per-request 4]
//     [--workers 100,1000] [--runs 3] [--json PATH]
//     [--variants generated,no-status-cel,no-cel,map-workers,grouped-workers]
//     [--surroundings bare] [--standing 10000] [--standing-workers 1000] [--watchers 2]
//     [--write-rate 0] (the measured PUTs at most this many a second, as a throttled client's)
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import {
  CommandLine,
  REPO_ROOT,
  createNamespace,
  log,
  machineName,
  outDir,
  readCrd,
  seconds,
  startBenchControlPlane,
  type Crd,
} from './harness/index.js';
import { applyVariant, createProbe } from './status-write-cost/apply-variant.js';
import { SURROUNDINGS, surround, type Loaded } from './status-write-cost/surroundings.js';
import { formatTables, ruleCosts, rows } from './status-write-cost/summary.js';
import { countRules, crdVariant, VARIANTS, type Variant } from './status-write-cost/variants.js';
import {
  IN_FLIGHT,
  measureWorkload,
  type Measurement,
  type Workload,
} from './status-write-cost/workload.js';

const line = new CommandLine();
line.only([
  ...['--requests', '--writes-per-request', '--workers', '--runs', '--variants', '--json'],
  ...['--surroundings', '--standing', '--standing-workers', '--watchers', '--write-rate'],
]);
const requests = line.integer('--requests', 500);
const writesPerRequest = line.integer('--writes-per-request', 4);
const workerCounts = (line.list('--workers') ?? ['100', '1000']).map(Number);
const runs = line.integer('--runs', 3);
const jsonPath = line.optionalValue('--json');
for (const count of workerCounts)
  if (!Number.isInteger(count) || count < 0) throw new Error('--workers takes integers');
const variants = line.choices('--variants', VARIANTS, 'variant');
const surroundingsList = line.list('--surroundings')
  ? line.choices('--surroundings', SURROUNDINGS, 'surroundings')
  : (['bare'] as const);
const writeRate = line.integer('--write-rate', 0, 0);
const loaded: Loaded = {
  standing: line.integer('--standing', 10_000),
  workers: line.integer('--standing-workers', 1000),
  watchers: line.integer('--watchers', 2, 0),
};
const workloads: Workload[] = [
  ...workerCounts.map((workers) => ({ kind: 'waiting' as const, workers })),
  { kind: 'granted' },
  ...workerCounts.map((workers) => ({ kind: 'granted-over' as const, workers })),
];

/** The items in run `run`'s order: turned by one each run, so none is always first. */
function orderOf<T>(items: readonly T[], run: number): T[] {
  const turn = run % items.length;
  return [...items.slice(turn), ...items.slice(0, turn)];
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const dir = await outDir('status-write-cost');
  const generated = await readCrd(join(REPO_ROOT, 'crds', 'simlock.dev_leaserequests.yaml'));
  const crds = new Map<Variant, Crd>();
  for (const variant of variants) {
    const { crd, removedRules } = crdVariant(generated, variant);
    crds.set(variant, crd);
    log(`${variant}: ${removedRules} rules removed, ${countVariantRules(crd)} left`);
  }
  log(`machine: ${machineName()}; load ${os.loadavg()[0]?.toFixed(1)}; out: ${dir}`);
  const cluster = await startBenchControlPlane();
  const { admin } = cluster;
  const measurements: Measurement[] = [];
  const switches: { variant: Variant; ms: number }[] = [];
  try {
    const namespace = 'status-writes';
    const probe = { namespace: 'status-write-probe', name: 'probe' };
    await createNamespace(admin, namespace);
    await createNamespace(admin, probe.namespace);
    await createProbe(admin, probe);
    let current: Variant | undefined;
    for (let run = 0; run < runs; run++) {
      for (const surroundings of orderOf(surroundingsList, run)) {
        const around = await surround(admin, surroundings, loaded);
        try {
          for (const workload of workloads) {
            for (const variant of orderOf(variants, run)) {
              if (variant !== current) {
                const { switchMs } = await applyVariant(
                  admin,
                  variant,
                  crds.get(variant) as Crd,
                  probe,
                );
                switches.push({ variant, ms: switchMs });
                current = variant;
              }
              const eventsBefore = around.events();
              const m = await measureWorkload(
                { admin, namespace, requests, writesPerRequest, run, variant, writeRate },
                workload,
              );
              if (surroundings !== 'bare') {
                m.workload += ` ${surroundings}`;
                m.watchEventsPerWrite = (around.events() - eventsBefore) / m.writes;
              }
              measurements.push(m);
              const refused = Object.values(m.refused).reduce((a, b) => a + b, 0);
              log(
                `run ${run + 1}/${runs} ${m.workload} ${variant}: ${m.writes} writes in ${seconds(m.ms)}, ` +
                  `apiserver ${m.apiserverCpuMsPerWrite.toFixed(2)} ms/write, ${m.writesPerSecond.toFixed(0)}/s, ` +
                  `p50 ${m.p50Ms.toFixed(1)} ms, p99 ${m.p99Ms.toFixed(1)} ms, refused ${refused}, load ${m.loadAverage.toFixed(1)}` +
                  (m.watchEventsPerWrite === undefined
                    ? ''
                    : `, ${m.watchEventsPerWrite.toFixed(1)} watch events a write`),
              );
            }
          }
        } finally {
          await around.takeDown();
        }
      }
    }
  } finally {
    await cluster.stop();
  }
  const table = rows(measurements);
  const costs = ruleCosts(measurements);
  const finishedAt = new Date().toISOString();
  process.stdout.write(
    `status write cost: ${requests} requests, ${writesPerRequest} writes each (waiting), ` +
      `${IN_FLIGHT} in flight, medians of ${runs} runs; ${machineName()}; ${startedAt} – ${finishedAt}\n\n` +
      formatTables(table, costs),
  );
  if (jsonPath !== undefined) {
    await writeFile(
      jsonPath,
      `${JSON.stringify(
        {
          machine: machineName(),
          startedAt,
          finishedAt,
          options: {
            requests,
            writesPerRequest,
            workers: workerCounts,
            runs,
            variants,
            surroundings: surroundingsList,
            writeRate,
            loaded,
            inFlight: IN_FLIGHT,
          },
          rows: table,
          ruleCosts: costs,
          variantSwitches: switches,
          measurements,
        },
        null,
        2,
      )}\n`,
    );
    log(`wrote ${jsonPath}`);
  }
}

function countVariantRules(crd: Crd): number {
  return crd.spec.versions.reduce((sum, v) => sum + countRules(v.schema.openAPIV3Schema), 0);
}

await main();
