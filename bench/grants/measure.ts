// What every side measures alike: the clock from the first create to the last item done, the
// API server's own count of writes (the benchmark's creates left out), and CPU seconds by process.
import os from 'node:os';
import type { KubeClient } from '../../runtime/index.js';
import {
  apiserverClosedWatchers,
  apiserverWrites,
  cpuBetween,
  cpuSeconds,
  totalWrites,
  waitUntil,
  writesBetween,
  type BenchControlPlane,
  type WriteCounts,
} from '../harness/index.js';
import type { Options, Size } from './options.js';

export interface SideResult {
  /** From the first create to the last item done (grant, bind, allocation, Running, admission). */
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
  /**
   * simlock: the controller's event loop held up, the most in any 2 s while the side ran (ms; its
   * `nodejs_eventloop_lag_max_seconds`, read every 2 s): a watch it does not read meanwhile is one
   * kube-apiserver may close as unresponsive.
   */
  controllerLoopLagMaxMs?: number;
  /** simlock: how requests went (ms), from what the benchmark's watch saw. */
  timeline?: Record<string, number | null>;
  /** DRA: devices found allocated to more than one claim (must be 0). */
  doubleAllocations?: number;
  /** Watchers kube-apiserver closed as unresponsive meanwhile, by resource (none: absent). */
  watchersClosed?: Record<string, number>;
  /** The stage standing idle before the clock (--idle-s): what the fleet alone costs. */
  idle?: IdleCost;
}

/** What a side's stage costs while nothing is asked of it: CPU by process, writes by kind. */
export interface IdleCost {
  seconds: number;
  /** Milliseconds of CPU a second, by process. */
  cpuMsPerSecond: Record<string, number>;
  /** Every write meanwhile, by "VERB resource" (heartbeats included). */
  writes: WriteCounts;
}

/** Stands `seconds` idle and counts what the processes and the API server did meanwhile. */
export async function idleCost(admin: KubeClient, seconds: number): Promise<IdleCost> {
  const before = await apiserverWrites(admin);
  const cpuBefore = await cpuSeconds();
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuBetween(cpuBefore, await cpuSeconds());
  const cpuMsPerSecond = Object.fromEntries(
    Object.entries(cpu).map(([name, used]) => [name, Math.round((used * 1000) / elapsed)]),
  );
  return {
    seconds: elapsed,
    cpuMsPerSecond,
    writes: writesBetween(before, await apiserverWrites(admin)),
  };
}

/** What a side is given: its control plane, size, client rate limit, folder and a unique tag. */
export interface SideContext {
  cluster: BenchControlPlane;
  size: Size;
  /** Requests/s for the side's own client (0: unthrottled). */
  qps: number;
  dir: string;
  tag: string;
  options: Options;
}

/** Client flags in kube-scheduler's form: QPS and a burst of twice that, or unthrottled. */
export function clientLimitFlags(qps: number): string[] {
  return qps > 0
    ? [`--kube-api-qps=${qps}`, `--kube-api-burst=${qps * 2}`]
    : ['--kube-api-qps=100000', '--kube-api-burst=100000'];
}

export interface SideStart {
  started: number;
  cpuBefore: Record<string, number>;
  before: WriteCounts;
  closedBefore: Record<string, number>;
}

/** Takes the counts a side's figures are measured from; call it just before the first create. */
export async function startOfSide(admin: KubeClient): Promise<SideStart> {
  const before = await apiserverWrites(admin);
  const closedBefore = await apiserverClosedWatchers(admin);
  const cpuBefore = await cpuSeconds();
  return { before, closedBefore, cpuBefore, started: performance.now() };
}

export interface SideEnd {
  finished: boolean;
  ms: number;
  cpu: Record<string, number>;
  /** The side's writes: those `keep` selects, the benchmark's own creates left out. */
  ours: WriteCounts;
  /** Watchers closed as unresponsive during the side, by resource (any watcher's). */
  watchersClosed: Record<string, number>;
}

/**
 * The end of one side: waits until it is done (or its timeout), takes its time and CPU, gives the
 * writes that trail the last item `tailMs` (1.5 s) to land, and counts the side's own writes.
 */
export async function endOfSide(
  admin: KubeClient,
  start: SideStart,
  side: {
    done: () => boolean;
    what: string;
    timeoutMs: number;
    keep: (key: string) => boolean;
    /** The benchmark's own creates, by "POST resource", to leave out. */
    creates: Record<string, number>;
    tailMs?: number | undefined;
  },
): Promise<SideEnd> {
  const finished = await waitUntil(side.done, side.timeoutMs, side.what, 20).then(
    () => true,
    () => false,
  );
  const ms = performance.now() - start.started;
  const cpu = cpuBetween(start.cpuBefore, await cpuSeconds());
  await new Promise((resolve) => setTimeout(resolve, side.tailMs ?? 1500));
  const writes = writesBetween(start.before, await apiserverWrites(admin));
  let ours = Object.fromEntries(Object.entries(writes).filter(([key]) => side.keep(key)));
  for (const [key, count] of Object.entries(side.creates)) ours = withoutCreates(ours, key, count);
  const watchersClosed = writesBetween(start.closedBefore, await apiserverClosedWatchers(admin));
  return { finished, ms, cpu, ours, watchersClosed };
}

/** A side's result from its end and how many items were done. */
export function sideResult(
  end: SideEnd,
  done: number,
  items: number,
  extra: Partial<SideResult> = {},
): SideResult {
  return {
    ms: end.ms,
    done,
    perSecond: (done * 1000) / end.ms,
    writes: end.ours,
    writesPerItem: totalWrites(end.ours) / items,
    cpu: end.cpu,
    loadAverage: os.loadavg()[0],
    ...(end.finished ? {} : { unfinished: true }),
    ...(Object.keys(end.watchersClosed).length > 0 ? { watchersClosed: end.watchersClosed } : {}),
    ...extra,
  };
}

/** Leaves out the benchmark's own creates. */
function withoutCreates(counts: WriteCounts, key: string, creates: number): WriteCounts {
  const rest = { ...counts };
  const left = (rest[key] ?? 0) - creates;
  if (left > 0) rest[key] = left;
  else delete rest[key];
  return rest;
}

export function delta(before: Record<string, number>, after: Record<string, number>, name: string) {
  return (after[name] ?? 0) - (before[name] ?? 0);
}

/** kube-apiserver CPU per item of one side, in milliseconds. */
export function apiserverMsPerItem(side: { cpu?: Record<string, number>; done: number }): number {
  return ((side.cpu?.['kube-apiserver'] ?? Number.NaN) * 1000) / side.done;
}
