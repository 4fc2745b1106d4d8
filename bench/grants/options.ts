// The grants benchmark's command line: sizes, rate limits, runs and which sides to run.
import { CommandLine } from '../harness/index.js';

export interface Size {
  workers: number;
  requests: number;
}

/**
 * The sides, in the order each run measures them on its control plane. `scheduler` is plain
 * kube-scheduler binds (the ceiling); the peers do the same job as simlock: DRA allocations (by
 * the scheduler, with and without the claim's finalizer preset), KWOK pods to Running, Kueue
 * admissions.
 */
export const SIDES = [
  'scheduler',
  'dra',
  'dra-preset-finalizer',
  'kwok',
  'kueue',
  'simlock',
] as const;
export type SideName = (typeof SIDES)[number];

/** minimalkueue's client is fixed at 50 requests/s (burst 100): it is compared at that row only. */
export const KUEUE_QPS = 50;

export interface Options {
  sizes: Size[];
  runs: number;
  qpsList: number[];
  sides: Set<SideName>;
  concurrency: number;
  jsonPath: string | undefined;
  json: boolean;
  cpuProfile: boolean;
  keep: boolean;
  /** A side still not done after this long is reported as unfinished, with what it did by then. */
  sideTimeoutMs: number;
  /** Seconds of kube-apiserver CPU profile (/debug/pprof/profile) to take during the simlock side. */
  apiserverProfileSeconds: number | undefined;
  /** Seconds after the clock's start that profile begins (a later part of a long side). */
  apiserverProfileDelaySeconds: number;
  /** Flags added to the controller's command line: a setting's before and after, in one program. */
  controllerArgs: string[];
  /**
   * Seconds each side's stage stands idle, up, settled (simlock: every worker's Lease namespace
   * made) and warmed, before its clock starts: what the fleet alone (agents or Nodes, controller
   * or scheduler) costs each process a second. 0: not measured, and nothing waited for.
   */
  idleSeconds: number;
}

const DEFAULT_SIZES: Size[] = [
  { workers: 10, requests: 200 },
  { workers: 100, requests: 2000 },
  { workers: 1000, requests: 5000 },
];

export function parseOptions(argv: readonly string[] = process.argv.slice(2)): Options {
  const line = new CommandLine(argv);
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
    '--apiserver-profile-s',
    '--apiserver-profile-after-s',
    '--controller-args',
    '--idle-s',
  ]);
  const sizes =
    line.list('--sizes')?.map((text) => {
      const [workers, requests] = text.split('x').map(Number);
      if (!Number.isInteger(workers) || !Number.isInteger(requests) || !workers || !requests)
        throw new Error(`--sizes takes WxN pairs such as 10x200, not ${text}`);
      return { workers, requests };
    }) ?? DEFAULT_SIZES;
  const qpsList = (line.list('--qps') ?? ['0', '100', '50']).map(Number);
  if (qpsList.some((qps) => !Number.isFinite(qps) || qps < 0))
    throw new Error('--qps takes numbers (0: unthrottled)');
  const sideNames = line.list('--sides') ?? [...SIDES];
  const known = new Set<string>(SIDES);
  for (const name of sideNames)
    if (!known.has(name))
      throw new Error(`--sides: unknown side ${name}; known: ${SIDES.join(',')}`);
  const profile = line.string('--apiserver-profile-s');
  return {
    sizes,
    runs: line.integer('--runs', 3),
    qpsList,
    sides: new Set(sideNames as SideName[]),
    concurrency: line.integer('--concurrency', 32),
    jsonPath: line.optionalValue('--json'),
    json: line.has('--json'),
    cpuProfile: line.has('--cpu-prof'),
    keep: line.has('--keep'),
    sideTimeoutMs: line.integer('--timeout-s', 600) * 1000,
    apiserverProfileSeconds:
      profile === undefined ? undefined : line.integer('--apiserver-profile-s', 10),
    apiserverProfileDelaySeconds: line.integer('--apiserver-profile-after-s', 0, 0),
    controllerArgs: controllerArgs(line.string('--controller-args')),
    idleSeconds: line.integer('--idle-s', 0, 0),
  };
}

/**
 * `--controller-args dispatch-event-hold-ms=1000,reason-write-interval-ms=500`: the controller's
 * flags as name=value pairs (without the dashes, which the command line would read as its own).
 */
export function controllerArgs(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text.split(',').flatMap((pair) => {
    const match = /^([a-z][a-z0-9-]*)=(.*)$/.exec(pair.trim());
    if (!match) throw new Error(`--controller-args takes name=value pairs, not ${pair}`);
    return [`--${match[1] ?? ''}`, match[2] ?? ''];
  });
}
