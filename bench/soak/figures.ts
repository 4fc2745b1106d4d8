// The soak's figures and verdicts, from what the watch recorded and the faults measured: leases per
// minute, grant latency in calm and fault minutes, failover and re-route times, memory, API writes
// per lease, and each invariant with its count of violations.
import { percentile } from '../harness/index.js';
import type { FaultWindow, PartitionResult, SoakFaults } from './faults.js';
import type { RequestRecord, SoakWatch } from './watch.js';

/** A minute counts as a fault minute when a fault was under way in it or ended 15 s before. */
const FAULT_TAIL_MS = 15_000;

export interface Minute {
  minute: number;
  grants: number;
  fault: boolean;
  p50Ms: number;
  p99Ms: number;
}

export function minutes(watch: SoakWatch, windows: FaultWindow[], started: number): Minute[] {
  const byMinute = new Map<number, number[]>();
  for (const record of watch.records.values()) {
    if (record.grantedAt === undefined) continue;
    const minute = Math.floor((record.grantedAt - started) / 60_000);
    const latencies = byMinute.get(minute) ?? [];
    // Latency only of requests that need not wait: iPads wait on a full fleet by design.
    latencies.push(
      record.kind === 'iphone' || record.kind === 'physical'
        ? record.grantedAt - record.createdAt
        : -1,
    );
    byMinute.set(minute, latencies);
  }
  return [...byMinute.entries()]
    .sort(([a], [b]) => a - b)
    .map(([minute, all]) => {
      const from = started + minute * 60_000;
      const to = from + 60_000;
      const fault = windows.some(
        (window) => window.start < to && window.end + FAULT_TAIL_MS > from,
      );
      const latencies = all.filter((value) => value >= 0);
      return {
        minute,
        grants: all.length,
        fault,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
      };
    });
}

export function latencyBy(
  watch: SoakWatch,
  windows: FaultWindow[],
  started: number,
): { calm: number[]; fault: number[] } {
  const faultMinutes = new Set(
    minutes(watch, windows, started)
      .filter((minute) => minute.fault)
      .map((minute) => minute.minute),
  );
  const calm: number[] = [];
  const fault: number[] = [];
  for (const record of watch.records.values()) {
    if (record.grantedAt === undefined) continue;
    if (record.kind !== 'iphone' && record.kind !== 'physical') continue;
    const minute = Math.floor((record.grantedAt - started) / 60_000);
    (faultMinutes.has(minute) ? fault : calm).push(record.grantedAt - record.createdAt);
  }
  return { calm, fault };
}

export interface Reroute {
  worker: string;
  /** From the cut to the grant elsewhere of each request that had been dispatched to it. */
  reroutesMs: number[];
  /**
   * Requests granted on the cut worker itself as the cut began: its grant was sent before the
   * packets stopped, and the API server stored it (and the watch told of it) a moment later.
   */
  grantedAsCut: string[];
  /** Requests dispatched to it that were not granted elsewhere within 30 s of their creation. */
  stuck: string[];
}

/**
 * A grant on the cut worker seen this soon after the cut was sent before it: at the soak's load a
 * write takes up to a second at the API server, and the watch as long again to tell of it.
 */
export const GRANT_IN_FLIGHT_MS = 2000;

export function reroutes(
  records: ReadonlyMap<string, RequestRecord>,
  partitions: readonly PartitionResult[],
): Reroute[] {
  return partitions.map((partition) => {
    const reroutesMs: number[] = [];
    const grantedAsCut: string[] = [];
    const stuck: string[] = [];
    for (const [name, record] of records) {
      if (record.kind !== 'iphone' && record.kind !== 'physical') continue;
      const sentThere = [...record.leases.values()].some(
        (lease) =>
          lease.worker === partition.worker &&
          lease.seenAt >= partition.cutAt - 5000 &&
          lease.seenAt <= partition.healedAt,
      );
      if (!sentThere) continue;
      if (record.grantedAt !== undefined && record.grantedOn !== partition.worker) {
        reroutesMs.push(record.grantedAt - partition.cutAt);
      }
      if (
        record.grantedAt !== undefined &&
        record.grantedOn === partition.worker &&
        record.grantedAt <= partition.cutAt + GRANT_IN_FLIGHT_MS
      ) {
        grantedAsCut.push(name);
        continue;
      }
      // Capacity elsewhere existed all along (two dozen idle simulators): each such request must
      // be granted elsewhere, in time, unless it was created too late in the cut to tell.
      const late = record.createdAt > partition.healedAt - 30_000;
      const grantedElsewhereInTime =
        record.grantedAt !== undefined &&
        record.grantedOn !== partition.worker &&
        record.grantedAt - record.createdAt <= 30_000;
      if (!late && record.createdAt >= partition.cutAt - 5000 && !grantedElsewhereInTime)
        stuck.push(
          `${name} (created ${new Date(record.createdAt).toISOString().slice(11, 19)}, granted ${record.grantedOn ?? 'never'} after ${record.grantedAt === undefined ? '-' : record.grantedAt - record.createdAt} ms)`,
        );
    }
    return {
      worker: partition.worker,
      reroutesMs: reroutesMs.sort((a, b) => a - b),
      grantedAsCut,
      stuck,
    };
  });
}

export interface Invariant {
  name: string;
  violations: number;
  examples: string[];
}

export function invariants(
  watch: SoakWatch,
  faults: SoakFaults,
  routes: Reroute[],
  leftOver: string[],
): Invariant[] {
  const unended: string[] = [];
  const twice: string[] = [];
  for (const [name, record] of watch.records) {
    const outcomes = [...record.outcomes];
    // A pinned request the benchmark withdrew before it was granted ended as it was asked to; one
    // whose delete the harness gave up is the harness's failure (reported apart), not the product's.
    if (outcomes.length === 0 && record.kind === 'pinned' && (record.deleted || record.abandoned))
      continue;
    if (outcomes.length === 0 || outcomes.some((outcome) => outcome === 'failed:'))
      unended.push(`${name}: ${outcomes.join(',') || 'no outcome'}`);
    if (record.grantedLeases.size > 1)
      twice.push(
        `${name}: Granted under ${record.grantedLeases.size} Leases (${[...record.grantedLeases]
          .map((uid) => {
            const lease = record.leases.get(uid);
            return `${uid} on ${lease?.worker ?? '?'}: ${(lease?.seen ?? []).join(' > ')}`;
          })
          .join('; ')}; granted on ${record.grantedOn ?? '?'})`,
      );
  }
  const detection = faults.partitions.flatMap((partition) =>
    partition.problems
      .filter((problem) => problem.startsWith('disconnected'))
      .map((problem) => `${partition.worker}: ${problem}`),
  );
  const reconcile = faults.partitions.flatMap((partition) =>
    partition.problems
      .filter((problem) => !problem.startsWith('disconnected'))
      .map((problem) => `${partition.worker}: ${problem}`),
  );
  const stuck = routes.flatMap((route) => route.stuck.map((entry) => `${route.worker}: ${entry}`));
  const converge = faults.convergence
    .filter((entry) => entry.problem)
    .map((entry) => `${entry.after}: ${entry.problem ?? ''}`);
  const make = (name: string, examples: string[]): Invariant => ({
    name,
    violations: examples.length,
    examples: examples.slice(0, 10),
  });
  return [
    make('every request ends Granted, Failed with a code, or Released', [
      ...unended,
      ...leftOver.map((name) => `${name}: still there at the end`),
    ]),
    make('no request granted under two Leases', twice),
    make('no device in two live Granted Leases (snapshots)', watch.doubleGrants),
    make('a cut-off worker reads disconnected within its heartbeat + 1 s', detection),
    make('its requests go elsewhere (granted elsewhere within 30 s)', stuck),
    make('on return it reconciles (released reclaimed, held kept)', reconcile),
    make('waiting reasons converge after each fault (60 s)', converge),
    make('every fault was carried out', faults.errors),
  ];
}
