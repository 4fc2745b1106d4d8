// What one walk's grant estimates cost the controller (controller/estimate/): every waiting request
// gets an estimate from the leases on the workers that are full for it and its class's history.
// At 1000 workers and 5000 requests the controller's profile showed the estimates as a third of its
// CPU in the grants benchmark. The fleet here is that benchmark's at its end: every worker full with
// `--leases-per-worker` granted leases, every waiting request of one of `--specs` specs, requests of
// a spec sharing one list of reasons (as controller/walk.ts hands them out), the history of each
// class full (200 samples of each kind, history.ts's bound). `--lists own` gives every request a
// list of its own instead, as the walk does for a request with something remembered of its own (a
// refusal, a silence): most of them, in the grants benchmark's burst. Pure: no cluster.
//
//   node --import tsx bench/estimates.ts [--workers 1000] [--requests 5000] [--specs 1]
//     [--leases-per-worker 5] [--lists shared|own] [--runs 7] [--json PATH]
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { DeviceSpec, WorkerReason } from '../api/index.js';
import {
  estimateQueue,
  type ClassHistory,
  type HeldLease,
  type WaitingForEstimate,
} from '../controller/index.js';
import { CommandLine, machineName, median } from './harness/index.js';

const line = new CommandLine();
line.only([
  '--workers',
  '--requests',
  '--specs',
  '--leases-per-worker',
  '--lists',
  '--runs',
  '--json',
]);
const workers = line.integer('--workers', 1000);
const requests = line.integer('--requests', 5000);
const specs = line.integer('--specs', 1);
const leasesPerWorker = line.integer('--leases-per-worker', 5);
const listModes = line.choices('--lists', ['shared', 'own'] as const, 'lists');
const runs = line.integer('--runs', 7);
const jsonPath = line.optionalValue('--json');

// Collect garbage before each timed run, so that no run pays for the garbage of the one before.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

const NOW = Date.parse('2026-12-04T12:00:00Z');
const MODELS = ['iPhone 16', 'iPhone 16 Pro', 'iPhone 15', 'iPad Air', 'iPhone SE'];
const specOf = (index: number): DeviceSpec => ({
  platform: 'ios',
  model: `${MODELS[index % MODELS.length] ?? 'iPhone 16'}${index >= MODELS.length ? ` ${index}` : ''}`,
});
const workerName = (index: number) => `mac-mini-${String(index).padStart(4, '0')}`;

const allSpecs = Array.from({ length: specs }, (_, index) => specOf(index));
// Every worker full, for every spec: one list of reasons each spec's requests share.
const reasons: readonly WorkerReason[] = Array.from({ length: workers }, (_, index) => ({
  worker: workerName(index),
  reason: 'full',
  capacityReason: 'platform-running-limit',
}));
const listOf = new Map(allSpecs.map((spec) => [spec, [...reasons]]));
const waitingWith = (lists: 'shared' | 'own'): WaitingForEstimate[] =>
  Array.from({ length: requests }, (_, index) => {
    const spec = allSpecs[index % specs] ?? specOf(0);
    return {
      key: `ns/r-${index}`,
      spec,
      queuedAt: NOW - 60_000 + index,
      workers: lists === 'own' ? [...reasons] : (listOf.get(spec) ?? reasons),
    };
  });
// Leases end over the next hour, in no order.
const leases: HeldLease[] = Array.from({ length: workers * leasesPerWorker }, (_, index) => ({
  worker: workerName(index % workers),
  spec: allSpecs[index % specs] ?? specOf(0),
  expiresAt: NOW + ((index * 7919) % 3_600_000),
  session: index % 10 === 0,
}));
const samples = (base: number) =>
  Array.from({ length: 200 }, (_, index) => base + ((index * 104_729) % base));
const history: ClassHistory = {
  leaseMs: samples(600_000),
  waitMs: samples(120_000),
  readyMs: samples(20_000),
};

const results = listModes.map((lists) => {
  const waiting = waitingWith(lists);
  const times: number[] = [];
  let estimated = 0;
  for (let run = 0; run < runs; run++) {
    collectGarbage();
    const started = performance.now();
    estimated = estimateQueue(waiting, leases, () => history, NOW).size;
    times.push(performance.now() - started);
  }
  return {
    lists,
    estimated,
    msPerWalk: median(times),
    minMs: Math.min(...times),
    maxMs: Math.max(...times),
  };
});
process.stdout.write(
  `grant estimates of one walk: ${requests} waiting requests of ${specs} spec(s), ${workers} workers full, ` +
    `${leases.length} leases; median of ${runs}; ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}\n` +
    results
      .map(
        (r) =>
          `lists ${r.lists.padEnd(6)} ${r.msPerWalk.toFixed(1)} ms a walk (${r.minMs.toFixed(1)}–${r.maxMs.toFixed(1)}), ${r.estimated} estimates`,
      )
      .join('\n') +
    '\n',
);
if (jsonPath !== undefined)
  await writeFile(
    jsonPath,
    `${JSON.stringify(
      {
        machine: machineName(),
        at: new Date().toISOString(),
        options: { workers, requests, specs, leasesPerWorker, runs },
        results,
      },
      null,
      2,
    )}\n`,
  );
