// What the agents' Lease watches cost kube-apiserver, with a label selector (as the agents watch)
// or a field selector on spec.worker (selectableFields, Kubernetes 1.32+), or with every worker's
// Leases in a namespace of its own that its agent watches. Each agent watches the Leases of its own
// worker; with W agents and a selector every Lease event is offered to W watches (a selector filters,
// it does not index), while the watch cache keys watchers by namespace: the question is what each
// costs the API server per Lease. On a
// control plane of its own, per run and variant: W watches are opened (none under `none`), and N
// Leases spread over the W workers are created, granted and deleted; kube-apiserver's CPU per Lease
// (3 writes, 3 events) is the figure. The variants alternate within a run (their order turns from
// run to run). Prints; asserts nothing but that every watch saw only its own Leases.
//
//   node --import tsx bench/lease-watch-cost.ts [--watchers 1000] [--leases 2000] [--in-flight 32] [--runs 3]
//     [--variants label,field,namespace,none] [--json PATH]
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import {
  CommandLine,
  REPO_ROOT,
  createNamespace,
  inParallel,
  log,
  machineName,
  median,
  readCrd,
  seconds,
  startBenchControlPlane,
} from './harness/index.js';
import { applyLeaseCrd } from './lease-watch-cost/apply-crd.js';
import {
  WATCH_VARIANTS,
  leaseCrdFor,
  leaseNamespaceOf,
  selectsWorkerField,
  type WatchVariant,
} from './lease-watch-cost/variants.js';
import { measureWatches, workerName, type WatchMeasurement } from './lease-watch-cost/workload.js';

const line = new CommandLine();
line.only(['--watchers', '--leases', '--in-flight', '--runs', '--variants', '--json']);
const watchers = line.integer('--watchers', 1000);
const leases = line.integer('--leases', 2000);
const inFlight = line.integer('--in-flight', 32);
const runs = line.integer('--runs', 3);
const variants = line.choices('--variants', WATCH_VARIANTS, 'variant');
const jsonPath = line.optionalValue('--json');

function orderOf(run: number): WatchVariant[] {
  const turn = run % variants.length;
  return [...variants.slice(turn), ...variants.slice(0, turn)];
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const generated = await readCrd(join(REPO_ROOT, 'crds', 'simlock.dev_leases.yaml'));
  log(`machine: ${machineName()}; load ${os.loadavg()[0]?.toFixed(1)}`);
  const cluster = await startBenchControlPlane();
  const { admin } = cluster;
  const namespace = 'lease-watches';
  const measurements: WatchMeasurement[] = [];
  try {
    await createNamespace(admin, namespace);
    if (variants.includes('namespace')) {
      const started = performance.now();
      const workers = Array.from({ length: watchers }, (_, index) => workerName(index));
      await inParallel(workers, 8, (worker) =>
        createNamespace(admin, leaseNamespaceOf('namespace', worker, namespace)),
      );
      log(
        `${watchers} namespaces of workers' Leases made (${seconds(performance.now() - started)})`,
      );
    }
    // The control plane starts with crds/ as generated.
    let selectable = selectsWorkerField(generated);
    for (let run = 0; run < runs; run++) {
      for (const variant of orderOf(run)) {
        const crd = leaseCrdFor(generated, variant);
        if (selectsWorkerField(crd) !== selectable) {
          const { switchMs } = await applyLeaseCrd(admin, crd, namespace);
          selectable = selectsWorkerField(crd);
          log(
            `Lease CRD: spec.worker ${selectable ? '' : 'not '}selectable (${seconds(switchMs)})`,
          );
        }
        const m = await measureWatches({
          admin,
          namespace,
          watchers,
          leases,
          inFlight,
          run,
          variant,
        });
        measurements.push(m);
        log(
          `run ${run + 1}/${runs} ${variant}: ${m.watchers} watches, ${m.leases} Leases in ${seconds(m.ms)}, ` +
            `apiserver ${m.apiserverCpuMsPerLease.toFixed(2)} ms/Lease, etcd ${m.etcdCpuMsPerLease.toFixed(2)}, ` +
            `client ${m.clientCpuMsPerLease.toFixed(2)}, ${m.events} events, ${m.misdelivered} misdelivered, load ${m.loadAverage.toFixed(1)}`,
        );
      }
    }
  } finally {
    await cluster.stop();
  }
  const rows = variants.map((variant) => {
    const mine = measurements.filter((m) => m.variant === variant);
    const cpu = mine.map((m) => m.apiserverCpuMsPerLease);
    return {
      variant,
      runs: mine.length,
      apiserverCpuMsPerLease: median(cpu),
      min: Math.min(...cpu),
      max: Math.max(...cpu),
      etcdCpuMsPerLease: median(mine.map((m) => m.etcdCpuMsPerLease)),
      clientCpuMsPerLease: median(mine.map((m) => m.clientCpuMsPerLease)),
      misdelivered: mine.reduce((sum, m) => sum + m.misdelivered, 0),
      loadAverage: median(mine.map((m) => m.loadAverage)),
    };
  });
  const finishedAt = new Date().toISOString();
  process.stdout.write(
    `Lease watch cost: ${watchers} watches, ${leases} Leases created, granted and deleted, ` +
      `${inFlight} in flight, medians of ${runs} runs; ${machineName()}; ${startedAt} – ${finishedAt}\n\n` +
      'variant    runs  apiserver CPU ms/Lease (min–max)  etcd ms  client ms  misdelivered  load1\n' +
      rows
        .map(
          (r) =>
            `${r.variant.padEnd(9)}  ${String(r.runs).padEnd(4)}  ` +
            `${`${r.apiserverCpuMsPerLease.toFixed(2)} (${r.min.toFixed(2)}–${r.max.toFixed(2)})`.padEnd(32)}  ` +
            `${r.etcdCpuMsPerLease.toFixed(2).padEnd(7)}  ${r.clientCpuMsPerLease.toFixed(2).padEnd(9)}  ` +
            `${String(r.misdelivered).padEnd(12)}  ${r.loadAverage.toFixed(1)}`,
        )
        .join('\n') +
      '\n',
  );
  if (jsonPath !== undefined) {
    await writeFile(
      jsonPath,
      `${JSON.stringify(
        {
          machine: machineName(),
          startedAt,
          finishedAt,
          options: { watchers, leases, runs, variants, inFlight },
          rows,
          measurements,
        },
        null,
        2,
      )}\n`,
    );
    log(`wrote ${jsonPath}`);
  }
}

await main();
// Watches and the HTTPS pool may hold the loop open: the figures are out, so end.
process.exit(0);
