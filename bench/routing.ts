// Routing benchmark: one walk = for every waiting request, select + explain over every worker view
// (DESIGN.md §4). Prints the median time per walk and per request×worker pair, for a cold walk
// (every view new, as after a restart or when every worker changed) and a steady one (one worker's
// view changed since the last walk, the usual trigger). Requests come from a set of job configs
// (see waitingRequests); a cold walk costs about distinct specs × workers stage runs.
// Run: npm run bench:routing [-- --json] [-- --configs 200]
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { Device, DeviceSpec, Platform, WorkerStatus } from '../api/index.js';
import {
  createRoutingPolicy,
  walk as controllerWalk,
  type RoutingPolicy,
  type WaitingRequest,
  type WorkerView,
} from '../controller/index.js';

const CASES = [
  { requests: 100, workers: 10 },
  { requests: 1000, workers: 100 },
  { requests: 5000, workers: 1000 },
] as const;
const RUNS = 7;
/** Distinct job configs the waiting requests are drawn from (override with --configs). */
const DEFAULT_CONFIGS = 40;
/** DESIGN target: the largest walk within this, on the machine the bench runs on. */
const TARGET_MS = 200;

// Collect garbage before each timed walk, so that no walk pays for the garbage of the one before.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/** A small deterministic generator (mulberry32), so every run walks the same fleet. */
function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function choose<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

const MODELS: Record<Platform, { name: string; class: 'phone' | 'tablet' }[]> = {
  ios: [
    { name: 'iPhone 16', class: 'phone' },
    { name: 'iPhone 16 Pro', class: 'phone' },
    { name: 'iPhone 15', class: 'phone' },
    { name: 'iPhone SE (3rd generation)', class: 'phone' },
    { name: 'iPad Pro 13-inch (M4)', class: 'tablet' },
    { name: 'iPad Air 11-inch (M2)', class: 'tablet' },
  ],
  android: [
    { name: 'Pixel 8', class: 'phone' },
    { name: 'Pixel 7', class: 'phone' },
    { name: 'Pixel Fold', class: 'phone' },
    { name: 'Pixel Tablet', class: 'tablet' },
  ],
};
const RUNTIMES: Record<Platform, string[]> = {
  ios: ['17.5', '18.2', '18.4'],
  android: ['33', '34', '35'],
};
const OS_SPECS: Record<Platform, string[]> = {
  ios: ['18.4', '17.5', '>=18 <19', '>=17'],
  android: ['34', '35', '>=34'],
};

/**
 * One worker of a realistic fleet: a few disconnected, incompatible, unread or drained; some
 * unhealthy or busy; a third full; some at their RAM budget; warm simulators on many; physical
 * devices on some.
 */
function workerView(index: number, random: () => number): WorkerView {
  const name = `worker-${String(index).padStart(5, '0')}`;
  const roll = random();
  const connection = roll < 0.05 ? 'disconnected' : roll < 0.07 ? 'incompatible' : 'connected';
  const drained = random() < 0.1;
  if (random() < 0.03) return { name, connection, drained };

  const platformRoll = random();
  const platforms: Platform[] =
    platformRoll < 0.5 ? ['ios'] : platformRoll < 0.8 ? ['android'] : ['ios', 'android'];
  const limit = 2 + Math.floor(random() * 6);
  const capacityRoll = random();
  const platformFull = capacityRoll < 0.3;
  const globalFull = capacityRoll >= 0.3 && capacityRoll < 0.35;
  const atRamBudget = random() < 0.15;
  const running = platformFull || globalFull ? limit : Math.floor(random() * limit);
  const platformCapacity = {
    limit,
    running: platformFull ? limit : Math.min(running, limit - 1),
    evictable: 0,
    atRamBudget,
  };

  const devices: Device[] = [];
  for (const platform of platforms) {
    const simulators = 4 + Math.floor(random() * 8);
    for (let count = 0; count < simulators; count++) {
      const model = choose(random, MODELS[platform]);
      devices.push({
        id: `${name}-sim-${platform}-${count}`,
        name: model.name,
        model: model.name,
        platform,
        os: choose(random, RUNTIMES[platform]),
        physical: false,
        class: model.class,
        state: choose(random, ['ready', 'ready', 'leased', 'booting', 'absent'] as const),
      });
    }
    if (random() < 0.15) {
      const phones = 1 + Math.floor(random() * 3);
      for (let count = 0; count < phones; count++) {
        const model = choose(random, MODELS[platform]);
        const presentRoll = random();
        devices.push({
          id: `${name}-phone-${platform}-${count}`,
          name: model.name,
          model: model.name,
          platform,
          os: choose(random, RUNTIMES[platform]),
          physical: true,
          class: model.class,
          state: choose(random, ['ready', 'ready', 'leased', 'reclaiming'] as const),
          ...(presentRoll < 0.2
            ? { presence: { present: false, reason: 'not-present' as const } }
            : presentRoll < 0.6
              ? { presence: { present: true } }
              : {}),
        });
      }
    }
  }

  const status: WorkerStatus = {
    protocol: 1,
    agentVersion: '0.1.0',
    health: random() < 0.05 ? 'unhealthy' : 'running',
    capabilities: [
      { name: 'camera', available: random() < 0.3 },
      { name: 'nfc', available: random() < 0.1 },
    ],
    catalog: {
      platforms,
      models: platforms.flatMap((platform) =>
        MODELS[platform].filter(() => random() < 0.8).map((model) => ({ ...model, platform })),
      ),
      runtimes: platforms.flatMap((platform) =>
        RUNTIMES[platform].filter(() => random() < 0.8).map((version) => ({ platform, version })),
      ),
    },
    capacity: {
      global: { limit: limit * 2, running: globalFull ? limit * 2 : running, evictable: 0 },
      platforms: Object.fromEntries(platforms.map((platform) => [platform, platformCapacity])),
    },
    queueDepth: random() < 0.1 ? 1 + Math.floor(random() * 3) : 0,
    physicalQueueDepth: 0,
    queue: [],
    devices,
  };
  return { name, connection, drained, status };
}

function fleet(count: number, seed: number): WorkerView[] {
  const random = randomSource(seed);
  return Array.from({ length: count }, (_, index) => workerView(index, random));
}

/** One job config: mostly named models, some OS versions or ranges, a few physical or with requirements. */
function jobConfig(random: () => number): DeviceSpec {
  const platform: Platform = random() < 0.6 ? 'ios' : 'android';
  const request: DeviceSpec = { platform };
  if (random() < 0.8) request.model = choose(random, MODELS[platform]).name;
  else if (random() < 0.3) request.class = 'tablet';
  if (random() < 0.5) request.os = choose(random, OS_SPECS[platform]);
  if (random() < 0.1) request.physical = true;
  if (random() < 0.1) request.requires = ['camera'];
  return request;
}

/**
 * Waiting requests come from CI jobs, each with a fixed device config: `configs` of them, the
 * first ones far more common (weight 1/rank). Routing judges each worker once per distinct spec,
 * so a cold walk costs about distinct specs × workers stage runs; --configs shows how it grows.
 */
function waitingRequests(count: number, configs: number, seed: number): DeviceSpec[] {
  const random = randomSource(seed);
  const pool = Array.from({ length: configs }, () => jobConfig(random));
  const weights = pool.map((_, rank) => 1 / (rank + 1));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return Array.from({ length: count }, () => {
    let draw = random() * total;
    let index = 0;
    while (index < pool.length - 1 && draw >= (weights[index] ?? 0)) draw -= weights[index++] ?? 0;
    // A copy per request, as the controller has: equal specs, never the same object.
    return structuredClone(pool[index] as DeviceSpec);
  });
}

function walk(
  policy: RoutingPolicy,
  requests: readonly DeviceSpec[],
  views: readonly WorkerView[],
): number {
  let picks = 0;
  for (const request of requests) {
    if (policy.select(request, views) !== undefined) picks++;
    policy.explain(request, views);
  }
  return picks;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

interface Figures {
  requests: number;
  workers: number;
  distinctSpecs: number;
  picks: number;
  coldWalkMs: number;
  coldPairNs: number;
  steadyWalkMs: number;
  steadyPairNs: number;
  /** The controller's whole walk (controller/walk.ts): select, and for each request that waits
   * one reason per worker, with the walk's claims; steady, as above. */
  controllerWalkMs: number;
  waiting: number;
}

function measure(requestCount: number, workerCount: number, configs: number): Figures {
  const requests = waitingRequests(requestCount, configs, 7);
  const policy = createRoutingPolicy();
  const cold: number[] = [];
  const steady: number[] = [];
  const whole: number[] = [];
  let waiting = 0;
  const queue: WaitingRequest[] = requests.map((spec, index) => ({
    key: `ns/r-${index}`,
    spec,
    memos: { cannotServe: new Map(), refusals: new Map(), unanswered: new Map() },
  }));
  let picks = 0;
  for (let run = 0; run < RUNS; run++) {
    // Cold: new view objects for every worker, so nothing the pipeline remembered applies.
    let views = fleet(workerCount, 11);
    collectGarbage();
    let started = performance.now();
    picks = walk(policy, requests, views);
    cold.push(performance.now() - started);

    // Steady: the next walk after one worker's view changed (a new object, in a new list).
    const changed = run % workerCount;
    views = views.map((view, index) => (index === changed ? { ...view } : view));
    collectGarbage();
    started = performance.now();
    walk(policy, requests, views);
    steady.push(performance.now() - started);

    const viewRevisions = new Map(views.map((view) => [view.name, 0]));
    collectGarbage();
    started = performance.now();
    const outcomes = controllerWalk(queue, { views, viewRevisions }, policy);
    whole.push(performance.now() - started);
    waiting = [...outcomes.values()].filter((outcome) => outcome.kind === 'wait').length;
  }
  const pairs = requestCount * workerCount;
  const distinctSpecs = new Set(requests.map((request) => JSON.stringify(request))).size;
  return {
    requests: requestCount,
    workers: workerCount,
    distinctSpecs,
    picks,
    coldWalkMs: median(cold),
    coldPairNs: (median(cold) * 1e6) / pairs,
    steadyWalkMs: median(steady),
    steadyPairNs: (median(steady) * 1e6) / pairs,
    controllerWalkMs: median(whole),
    waiting,
  };
}

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  const value = index < 0 ? fallback : Number(process.argv[index + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a positive integer`);
  return value;
}

const json = process.argv.includes('--json');
const configs = option('--configs', DEFAULT_CONFIGS);
const results = CASES.map(({ requests, workers }) => measure(requests, workers, configs));
const largest = results[results.length - 1];
const summary = {
  cpus: os.cpus().length,
  runs: RUNS,
  configs,
  targetMs: TARGET_MS,
  withinTarget: largest !== undefined && largest.coldWalkMs < TARGET_MS,
  results,
};

if (json) {
  console.log(JSON.stringify(summary, null, 2));
} else {
  console.log(
    `routing walk: select + explain per request over every view; requests from ${configs} job configs; median of ${RUNS} runs; ${summary.cpus} CPUs`,
  );
  for (const figures of results) {
    const size = `${figures.requests}×${figures.workers}`.padEnd(10);
    console.log(
      `${size} cold ${figures.coldWalkMs.toFixed(1).padStart(7)} ms/walk ${figures.coldPairNs.toFixed(1).padStart(7)} ns/pair` +
        `   steady ${figures.steadyWalkMs.toFixed(1).padStart(7)} ms/walk ${figures.steadyPairNs.toFixed(1).padStart(7)} ns/pair` +
        `   (${figures.distinctSpecs} distinct specs, ${figures.picks} picks)` +
        `   controller walk ${figures.controllerWalkMs.toFixed(1).padStart(7)} ms (${figures.waiting} waiting)`,
    );
  }
  console.log(
    `largest cold walk ${largest?.coldWalkMs.toFixed(1)} ms: ${summary.withinTarget ? 'within' : 'OVER'} the ${TARGET_MS} ms target`,
  );
}
