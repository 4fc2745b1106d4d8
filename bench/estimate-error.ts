// How wrong is the estimate of when a waiting request is granted (issue 37)? A small fleet of
// fake-driver agents (W workers × S warm iPhone 16 simulators, one process), the controller as a
// real process, a control plane of its own, and a mixed load kept just above what the fleet
// serves, so that requests queue: each asks for a lease of 30, 60 or 90 s (spec.durationSeconds);
// half of the holders keep it to its expiry (the agent ends it), the others release it early (they
// delete their request after a random part of it). Arrivals are a Poisson process.
//
// For every request that waited longer than 30 s it compares the first estimate the request showed
// with a time in it (status.estimate.grantAt, what a CI job would act on) and the last one before
// its grant with the moment this program saw it Granted, and prints the median and p90 of the
// absolute error, the median real wait, and how many waits had no estimate at all. Target: median
// error under a quarter of the real wait.
//
//   node --import tsx bench/estimate-error.ts [--minutes 12] [--workers 2] [--slots 2]
//     [--per-minute 7] [--json [FILE]]
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Informer, isNotFound, simlockPath, type KubeClient } from '../runtime/index.js';
import type { HostedWorker } from './agent-host.js';
import {
  CommandLine,
  FLEET_LABEL,
  cpuCount,
  createNamespace,
  log,
  machineName,
  median,
  outDir,
  percentile,
  startAgentHost,
  startBenchControlPlane,
  startController,
  type AgentHost,
  type ControllerProcess,
} from './harness/index.js';

const line = new CommandLine();
line.only(['--minutes', '--workers', '--slots', '--per-minute', '--json']);
const MINUTES = line.integer('--minutes', 12, 1);
const WORKERS = line.integer('--workers', 2, 1);
const SLOTS = line.integer('--slots', 2, 1);
const PER_MINUTE = line.integer('--per-minute', 7, 1);
const jsonPath = line.optionalValue('--json');

const TAG = 'estimate';
const SYSTEM_NAMESPACE = 'simlock-estimate';
const NAMESPACE = 'requests-estimate';
const DURATIONS_S = [30, 60, 90];
/** Only waits longer than this count: a shorter wait needs no estimate. */
const LONG_WAIT_MS = 30_000;

function fleet(): HostedWorker[] {
  return Array.from({ length: WORKERS }, (_, index) => {
    const name = `w-${TAG}-${index}`;
    return {
      name,
      script: {
        models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
        runtimes: [{ platform: 'ios', version: '18.4' }],
        devices: Array.from({ length: SLOTS }, (_, slot) => ({
          id: `${name}-sim-${slot}`,
          name: 'iPhone 16',
          model: 'iPhone 16',
          platform: 'ios' as const,
          os: '18.4',
          booted: true,
        })),
        bootMs: 0,
      },
      config: { limits: { running: SLOTS, platforms: { ios: { running: SLOTS } } } },
    };
  });
}

/** What this program saw of one request, on its own watch, in wall-clock milliseconds. */
interface Seen {
  createdAt: number;
  durationS: number;
  keepsToExpiry: boolean;
  firstEstimate?: { at: number; grantAt: number; basis: string };
  lastEstimate?: { at: number; grantAt: number; basis: string };
  noBasis?: string;
  grantedAt?: number;
}

interface RequestStatus {
  phase?: string;
  estimate?: { grantAt?: string; basis?: string };
}

class Watch {
  readonly seen = new Map<string, Seen>();
  private readonly informer: Informer;

  constructor(
    admin: KubeClient,
    private readonly onGranted: (name: string, seen: Seen) => void,
  ) {
    this.informer = new Informer(admin, {
      path: simlockPath('leaseRequest', { namespace: NAMESPACE }),
    });
    this.informer.on((event) => {
      if (event.type === 'deleted') return;
      const seen = this.seen.get(event.object.metadata.name);
      if (seen === undefined || seen.grantedAt !== undefined) return;
      const status = (event.object.status ?? {}) as RequestStatus;
      const now = Date.now();
      const estimate = status.estimate;
      if (estimate?.grantAt !== undefined) {
        const reading = {
          at: now,
          grantAt: Date.parse(estimate.grantAt),
          basis: estimate.basis ?? '',
        };
        seen.firstEstimate ??= reading;
        seen.lastEstimate = reading;
      } else if (estimate?.basis !== undefined) {
        seen.noBasis ??= estimate.basis;
      }
      if (status.phase === 'Granted') {
        seen.grantedAt = now;
        this.onGranted(event.object.metadata.name, seen);
      }
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)] as T;

async function release(admin: KubeClient, name: string): Promise<void> {
  try {
    await admin.delete(simlockPath('leaseRequest', { namespace: NAMESPACE, name }));
  } catch (error) {
    if (!isNotFound(error)) log(`release ${name}: ${String(error)}`);
  }
}

interface ErrorFigures {
  samples: number;
  medianErrorS: number;
  p90ErrorS: number;
  /** The error as a share of that request's own wait: median. */
  medianRelative: number;
}

function errors(waits: Seen[], which: 'firstEstimate' | 'lastEstimate'): ErrorFigures {
  const measured = waits.flatMap((seen) => {
    const estimate = seen[which];
    if (estimate === undefined || seen.grantedAt === undefined) return [];
    const errorMs = Math.abs(estimate.grantAt - seen.grantedAt);
    return [{ errorMs, relative: errorMs / (seen.grantedAt - seen.createdAt) }];
  });
  if (measured.length === 0)
    return { samples: 0, medianErrorS: NaN, p90ErrorS: NaN, medianRelative: NaN };
  const errorsMs = measured.map((one) => one.errorMs);
  return {
    samples: measured.length,
    medianErrorS: round(median(errorsMs) / 1000),
    p90ErrorS: round(percentile(errorsMs, 90) / 1000),
    medianRelative: Math.round(median(measured.map((one) => one.relative)) * 100) / 100,
  };
}

const round = (value: number) => Math.round(value * 10) / 10;

async function run(dir: string) {
  const cluster = await startBenchControlPlane();
  const { admin, controlPlane } = cluster;
  let host: AgentHost | undefined;
  let controller: ControllerProcess | undefined;
  const timers = new Set<NodeJS.Timeout>();
  try {
    await createNamespace(admin, SYSTEM_NAMESPACE);
    await createNamespace(admin, NAMESPACE);
    host = await startAgentHost({
      kubeconfigPath: controlPlane.kubeconfigPath,
      systemNamespace: SYSTEM_NAMESPACE,
      fleetLabel: TAG,
      workers: fleet(),
      agentConfig: { heartbeat: { durationSeconds: 600, renewEverySeconds: 150 } },
      logPath: join(dir, 'agents.log'),
    });
    controller = await startController({
      kubeconfigPath: controlPlane.kubeconfigPath,
      systemNamespace: SYSTEM_NAMESPACE,
      watchNamespace: NAMESPACE,
      workerSelector: `${FLEET_LABEL}=${TAG}`,
      logPath: join(dir, 'controller.log'),
    });
    // A holder that releases early deletes its request after a random part of its lease; one that
    // keeps it to its expiry leaves it to the agent, and deletes the ended request after.
    const watch = new Watch(admin, (name, seen) => {
      const holdMs = seen.keepsToExpiry
        ? seen.durationS * 1000 + 15_000
        : seen.durationS * 1000 * (0.2 + 0.7 * Math.random());
      const timer = setTimeout(() => {
        timers.delete(timer);
        void release(admin, name);
      }, holdMs);
      timers.add(timer);
    });
    await watch.start();
    await pause(2000);

    const endAt = Date.now() + MINUTES * 60_000;
    let index = 0;
    log(
      `load: ${PER_MINUTE} requests a minute for ${MINUTES} min on ${WORKERS * SLOTS} simulators`,
    );
    while (Date.now() < endAt) {
      const name = `r-${String(index++).padStart(4, '0')}`;
      const durationS = pick(DURATIONS_S);
      watch.seen.set(name, {
        createdAt: Date.now(),
        durationS,
        keepsToExpiry: Math.random() < 0.5,
      });
      await admin.create(simlockPath('leaseRequest', { namespace: NAMESPACE }), {
        apiVersion: 'simlock.dev/v1alpha1',
        kind: 'LeaseRequest',
        metadata: { name },
        spec: {
          platform: 'ios',
          model: 'iPhone 16',
          durationSeconds: durationS,
          waitTimeoutSeconds: 3600,
        },
      });
      if (index % 10 === 0) log(`${index} requests created`);
      // Exponential gaps: a Poisson process of PER_MINUTE arrivals a minute.
      await pause(-Math.log(1 - Math.random()) * (60_000 / PER_MINUTE));
    }
    // Requests still waiting when the load stops are left out: their wait is not known.
    await watch.stop();
    const all = [...watch.seen.values()];
    const granted = all.filter((seen) => seen.grantedAt !== undefined);
    const long = granted.filter((seen) => (seen.grantedAt ?? 0) - seen.createdAt > LONG_WAIT_MS);
    const waitsMs = long.map((seen) => (seen.grantedAt ?? 0) - seen.createdAt);
    return {
      created: all.length,
      granted: granted.length,
      longWaits: long.length,
      medianWaitS: waitsMs.length > 0 ? round(median(waitsMs) / 1000) : Number.NaN,
      p90WaitS: waitsMs.length > 0 ? round(percentile(waitsMs, 90) / 1000) : Number.NaN,
      withoutEstimate: long.filter((seen) => seen.firstEstimate === undefined).length,
      noBasisSeen: [...new Set(long.flatMap((seen) => (seen.noBasis ? [seen.noBasis] : [])))],
      first: errors(long, 'firstEstimate'),
      last: errors(long, 'lastEstimate'),
    };
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await controller?.stop();
    await host?.stop();
    await cluster.stop();
  }
}

const dir = await outDir('estimate-error');
const result = await run(dir);
const quarter = result.medianWaitS / 4;
console.log(
  `estimate error: ${MINUTES} min, ${PER_MINUTE} requests/min on ${WORKERS} × ${SLOTS} simulators; machine: ${machineName()} (${cpuCount()} CPUs)`,
);
console.log(
  `requests ${result.created}, granted ${result.granted}, waited over 30 s ${result.longWaits} (median wait ${result.medianWaitS} s, p90 ${result.p90WaitS} s), of them with no estimate ${result.withoutEstimate}`,
);
for (const [label, figures] of [
  ['first estimate', result.first],
  ['last estimate before the grant', result.last],
] as const) {
  console.log(
    `${label.padEnd(32)} samples ${String(figures.samples).padStart(4)}  median |error| ${figures.medianErrorS} s  p90 ${figures.p90ErrorS} s  median |error|/wait ${figures.medianRelative}`,
  );
}
console.log(
  `target: median error of the first estimate under a quarter of the real wait: ${result.first.medianErrorS < quarter ? 'met' : 'MISSED'} against the median wait (${round(quarter)} s), ${result.first.medianRelative < 0.25 ? 'met' : 'MISSED'} request by request (${result.first.medianRelative})`,
);
if (result.noBasisSeen.length > 0)
  console.log(`"no basis" seen: ${result.noBasisSeen.join(' | ')}`);
if (line.has('--json')) {
  const path = jsonPath ?? join(dir, 'results.json');
  await writeFile(
    path,
    JSON.stringify(
      { machine: machineName(), cpus: cpuCount(), minutes: MINUTES, ...result },
      null,
      2,
    ),
  );
  console.log(`results written to ${path}`);
}
process.exit(0);
