// Latency of the fleet, end to end, at W = 100 workers (fake-driver agents in one process, the
// controller as a real process, a control plane of its own):
//   1. created → Granted, with free capacity: one request at a time on an idle fleet.
//   2. capacity freed → a waiting request Granted: every device leased, one request waiting; a
//      holder releases (deletes its request) and the clock runs until the waiting one is granted.
//      Target: p99 under 1 s.
//   3. physical plug-back → re-dispatch: the one matching phone unplugged, a physical request
//      waiting; the phone is plugged back in (FakeDriver.setPresence) and the clock runs until the
//      request is granted. Target: one probe interval plus under 1 s.
// Each scenario runs for every agent view debounce given (the agent's default is 1000 ms: a change
// of view reaches the controller that much later, which no controller can make up for).
//
//   node --import tsx bench/latency.ts [--samples 100] [--warm-up 10] [--debounce-ms 1000,100]
//     [--probe-ms 2000] [--without-finalizer] [--cpu-prof] [--json [FILE]]
// created → Granted is measured after --warm-up requests made the same way, one at a time: the
// first grants of processes just started are their code's first runs (V8 compiles as code gets
// hot) and their first connections, not what an idle fleet answers. They are timed too: the JSON
// and the summary give the first request's time and the p99 with the warm-up counted.
// Requests are created as the plugin and the client create them, with the release finalizer on
// (ADR 0031); --without-finalizer creates them as a plain `kubectl apply` does, and the controller
// then adds it before the first dispatch (one write more on the way).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REQUEST_FINALIZER } from '../api/index.js';
import { Informer, simlockPath, type KubeClient, type KubeObject } from '../runtime/index.js';
import type { HostedWorker } from './agent-host.js';
import { LeaseSteps, type GrantSteps } from './latency-steps.js';
import {
  FLEET_LABEL,
  CommandLine,
  cpuCount,
  createNamespace,
  machineName,
  outDir,
  percentile,
  startAgentHost,
  startBenchControlPlane,
  startController,
  waitUntil,
  type AgentHost,
  log,
} from './harness/index.js';

const WORKERS = 100;
const PHONE = 'bench-phone-1';

const line = new CommandLine();
line.only([
  '--samples',
  '--warm-up',
  '--debounce-ms',
  '--probe-ms',
  '--without-finalizer',
  '--cpu-prof',
  '--json',
]);
const samples = line.integer('--samples', 100);
const warmUps = line.integer('--warm-up', 10, 0);
const debounces = (line.list('--debounce-ms') ?? ['1000', '100']).map(Number);
const probeMs = line.integer('--probe-ms', 2000, 100);
const withFinalizer = !line.has('--without-finalizer');
// V8 CPU profiles of the controller and the agents' process, written beside their logs.
const cpuProfile = line.has('--cpu-prof');
const jsonPath = line.optionalValue('--json');

function simulators(name: string, count: number) {
  return Array.from({ length: count }, (_, index) => ({
    id: `${name}-sim-${index}`,
    name: 'iPhone 16',
    model: 'iPhone 16',
    platform: 'ios' as const,
    os: '18.4',
    booted: true,
  }));
}

/** W workers with `slots` warm simulators each; the first also has the enrolled phone. */
function fleet(tag: string, slots: number): HostedWorker[] {
  return Array.from({ length: WORKERS }, (_, index) => {
    const name = `w-${tag}-${String(index).padStart(3, '0')}`;
    const phone =
      index === 0
        ? [
            {
              id: PHONE,
              name: "Bench's iPhone",
              model: 'iPhone 15 Pro',
              platform: 'ios' as const,
              os: '18.4',
              physical: true,
            },
          ]
        : [];
    return {
      name,
      script: {
        models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
        runtimes: [{ platform: 'ios', version: '18.4' }],
        devices: [...simulators(name, slots), ...phone],
        bootMs: 0,
      },
      config: { limits: { running: slots, platforms: { ios: { running: slots } } } },
    };
  });
}

/** When each request was first seen in each phase, by this program's own watch. */
class Phases {
  private readonly seen = new Map<string, Map<string, number>>();
  private readonly informer: Informer;

  constructor(admin: KubeClient, namespace: string) {
    this.informer = new Informer(admin, { path: simlockPath('leaseRequest', { namespace }) });
    this.informer.on((event) => {
      if (event.type === 'deleted') return;
      const phase = (event.object.status as { phase?: string } | undefined)?.phase;
      if (!phase) return;
      const phases = this.seen.get(event.object.metadata.name) ?? new Map<string, number>();
      if (!phases.has(phase)) phases.set(phase, performance.now());
      this.seen.set(event.object.metadata.name, phases);
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  at(name: string, phase: string): number | undefined {
    return this.seen.get(name)?.get(phase);
  }

  async until(name: string, phase: string, timeoutMs = 60_000): Promise<number> {
    await waitUntil(() => this.at(name, phase) !== undefined, timeoutMs, `${name} ${phase}`, 5);
    return this.at(name, phase) ?? 0;
  }

  object(name: string): KubeObject | undefined {
    return this.informer.list().find((object) => object.metadata.name === name);
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }
}

interface Scenario {
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function summary(latencies: number[]): Scenario {
  return {
    samples: latencies.length,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    maxMs: Math.round(Math.max(...latencies)),
  };
}

async function createRequest(
  admin: KubeClient,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await admin.create(simlockPath('leaseRequest', { namespace }), {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'LeaseRequest',
    metadata: { name, ...(withFinalizer ? { finalizers: [REQUEST_FINALIZER] } : {}) },
    spec: { waitTimeoutSeconds: 3600, ...spec },
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One created → Granted sample: when it was sent (from the first), its time and its steps. */
type CreatedSample = { warmUp: boolean; atMs: number; ms: number } & Partial<GrantSteps>;

const round1 = (ms: number) => Math.round(ms * 10) / 10;

function roundSteps(step: GrantSteps): GrantSteps {
  return {
    createMs: round1(step.createMs),
    dispatchMs: round1(step.dispatchMs),
    agentMs: round1(step.agentMs),
    statusMs: round1(step.statusMs),
  };
}

async function measure(debounceMs: number, dir: string) {
  const cluster = await startBenchControlPlane();
  const { admin, controlPlane } = cluster;
  const hosts: AgentHost[] = [];
  const controllers: Awaited<ReturnType<typeof startController>>[] = [];
  const start = async (tag: string, slots: number) => {
    const systemNamespace = `simlock-${tag}`;
    const namespace = `requests-${tag}`;
    await createNamespace(admin, systemNamespace);
    await createNamespace(admin, namespace);
    hosts.push(
      await startAgentHost({
        kubeconfigPath: controlPlane.kubeconfigPath,
        systemNamespace,
        fleetLabel: tag,
        workers: fleet(tag, slots),
        agentConfig: {
          viewDebounceMs: debounceMs,
          probeIntervalMs: probeMs,
          heartbeat: { durationSeconds: 600, renewEverySeconds: 150 },
        },
        logPath: join(dir, `agents-${tag}.log`),
        cpuProfileDir: cpuProfile ? dir : undefined,
      }),
    );
    controllers.push(
      await startController({
        kubeconfigPath: controlPlane.kubeconfigPath,
        systemNamespace,
        watchNamespace: namespace,
        workerSelector: `${FLEET_LABEL}=${tag}`,
        logPath: join(dir, `controller-${tag}.log`),
        cpuProfileDir: cpuProfile ? dir : undefined,
      }),
    );
    const phases = new Phases(admin, namespace);
    await phases.start();
    // Let the controller see every worker's first view before anything is asked.
    await pause(2000);
    return { namespace, phases, host: hosts.at(-1) as AgentHost };
  };

  try {
    // 1. Free capacity: four warm simulators on every worker, one request at a time.
    log(`debounce ${debounceMs} ms: created → Granted`);
    const idle = await start(`idle-d${debounceMs}`, 4);
    const leaseSteps = new LeaseSteps(admin);
    await leaseSteps.start();
    const created: number[] = [];
    const steps: GrantSteps[] = [];
    // Each sample as it went (in the JSON): where a tail comes from, and when in the run.
    const createdSamples: CreatedSample[] = [];
    const firstSent = performance.now();
    for (let index = -warmUps; index < samples; index++) {
      const name = index < 0 ? `warm-up-${-index}` : `free-${index}`;
      const sent = performance.now();
      await createRequest(admin, idle.namespace, name, { platform: 'ios', model: 'iPhone 16' });
      const answered = performance.now();
      const granted = await idle.phases.until(name, 'Granted');
      const step = leaseSteps.of(name, { sentAt: sent, answeredAt: answered, grantedAt: granted });
      if (index >= 0) {
        created.push(granted - sent);
        if (step !== undefined) steps.push(step);
      }
      createdSamples.push({
        warmUp: index < 0,
        atMs: Math.round(sent - firstSent),
        ms: round1(granted - sent),
        ...(step === undefined ? {} : roundSteps(step)),
      });
      await pause(20);
    }
    const viewsSeenAtMs = leaseSteps.viewsSince(firstSent);
    await leaseSteps.stop();

    // 3. Physical plug-back, on the same fleet (worker 0 has the phone).
    log(`debounce ${debounceMs} ms: physical plug-back → Granted`);
    const worker0 = `w-idle-d${debounceMs}-000`;
    const plugBack: number[] = [];
    const physicalSamples = Math.max(3, Math.min(10, Math.ceil(samples / 10)));
    for (let index = 0; index < physicalSamples; index++) {
      idle.host.send({ kind: 'presence', worker: worker0, device: PHONE, present: false });
      // Read within a probe interval, then reported: wait until the controller can know it.
      await pause(probeMs + debounceMs + 500);
      const name = `phone-${index}`;
      await createRequest(admin, idle.namespace, name, {
        platform: 'ios',
        model: 'iPhone 15 Pro',
        physical: true,
      });
      await pause(1500 + Math.random() * probeMs);
      if (idle.phases.at(name, 'Granted') !== undefined)
        throw new Error(`${name} was granted while its phone was unplugged`);
      const pluggedAt = performance.now();
      idle.host.send({ kind: 'presence', worker: worker0, device: PHONE, present: true });
      plugBack.push((await idle.phases.until(name, 'Granted', 60_000)) - pluggedAt);
      await admin.delete(simlockPath('leaseRequest', { namespace: idle.namespace, name }));
      await waitUntil(() => idle.phases.object(name) === undefined, 30_000, `${name} released`);
    }

    // 2. Capacity freed: one simulator per worker, all leased; one request waits at a time.
    log(`debounce ${debounceMs} ms: capacity freed → Granted`);
    const full = await start(`full-d${debounceMs}`, 1);
    const holders: string[] = [];
    for (let index = 0; index < WORKERS; index++) {
      const name = `holder-${index}`;
      await createRequest(admin, full.namespace, name, { platform: 'ios', model: 'iPhone 16' });
      holders.push(name);
    }
    for (const name of holders) await full.phases.until(name, 'Granted');
    await pause(debounceMs + 1000);
    const freed: number[] = [];
    const freedSamples = Math.max(5, Math.ceil(samples / 3));
    for (let index = 0; index < freedSamples; index++) {
      const name = `waiting-${index}`;
      await createRequest(admin, full.namespace, name, { platform: 'ios', model: 'iPhone 16' });
      await full.phases.until(name, 'Waiting', 10_000);
      const holder = holders.shift() as string;
      const releasedAt = performance.now();
      await admin.delete(simlockPath('leaseRequest', { namespace: full.namespace, name: holder }));
      freed.push((await full.phases.until(name, 'Granted')) - releasedAt);
      holders.push(name);
      await pause(debounceMs + 300);
    }

    return {
      debounceMs,
      probeMs,
      createdToGranted: summary(created),
      /** The warm-up's first request (the processes' first grant), and every request's p99. */
      firstRequestMs: createdSamples[0]?.ms,
      createdToGrantedWithWarmUp: summary(createdSamples.map((sample) => sample.ms)),
      createdToGrantedSteps: {
        create: summary(steps.map((step) => step.createMs)),
        dispatch: summary(steps.map((step) => step.dispatchMs)),
        agent: summary(steps.map((step) => step.agentMs)),
        status: summary(steps.map((step) => step.statusMs)),
      },
      freedToGranted: summary(freed),
      plugBackToGranted: summary(plugBack),
      createdToGrantedSamples: createdSamples,
      /** When the agents' Worker status writes were seen, from the first sample sent (ms). */
      viewsSeenAtMs,
    };
  } finally {
    await Promise.all(controllers.map((controller) => controller.stop()));
    await Promise.all(hosts.map((host) => host.stop()));
    await cluster.stop();
  }
}

const dir = await outDir('latency');
const results = [];
for (const debounceMs of debounces) results.push(await measure(debounceMs, dir));

console.log(
  `latency at W = ${WORKERS}: ${samples} samples created → Granted, ${withFinalizer ? 'created with' : 'created without'} the release finalizer; machine: ${machineName()} (${cpuCount()} CPUs)`,
);
console.log(
  `${'view debounce'.padEnd(14)}${'created→granted p50/p99'.padStart(26)}${'freed→granted p50/p99'.padStart(24)}${`plug-in→granted p50/p99 (probe ${probeMs} ms)`.padStart(40)}`,
);
for (const result of results) {
  const pair = (scenario: Scenario) => `${scenario.p50Ms} / ${scenario.p99Ms} ms`;
  console.log(
    `${`${result.debounceMs} ms`.padEnd(14)}${pair(result.createdToGranted).padStart(26)}${pair(result.freedToGranted).padStart(24)}${pair(result.plugBackToGranted).padStart(40)}`,
  );
}
for (const result of results) {
  const { create, dispatch, agent, status } = result.createdToGrantedSteps;
  const pair = (scenario: Scenario) => `${scenario.p50Ms} / ${scenario.p99Ms} ms`;
  console.log(
    `debounce ${result.debounceMs} ms, created → Granted in steps (p50 / p99, ${dispatch.samples} samples): the create call ${pair(create)}, dispatch ${pair(dispatch)}, agent ${pair(agent)}, status ${pair(status)}`,
  );
}
for (const result of results) {
  const { createdToGranted, createdToGrantedWithWarmUp, firstRequestMs } = result;
  console.log(
    `debounce ${result.debounceMs} ms: created → granted p99 ${createdToGranted.p99Ms < 50 ? 'under' : 'NOT under'} 50 ms after ${warmUps} warm-up requests; with them counted p50 / p99 ${createdToGrantedWithWarmUp.p50Ms} / ${createdToGrantedWithWarmUp.p99Ms} ms, the first request ${firstRequestMs ?? '-'} ms`,
  );
}
for (const result of results) {
  const freedOk = result.freedToGranted.p99Ms < 1000;
  const plugOk = result.plugBackToGranted.p99Ms < result.probeMs + 1000;
  console.log(
    `debounce ${result.debounceMs} ms: freed → granted p99 ${freedOk ? 'within' : 'OVER'} 1 s; plug-in → granted p99 ${plugOk ? 'within' : 'OVER'} one probe interval + 1 s`,
  );
}
if (line.has('--json')) {
  const path = jsonPath ?? join(dir, 'results.json');
  await writeFile(
    path,
    JSON.stringify(
      { machine: machineName(), cpus: cpuCount(), samples, withFinalizer, results },
      null,
      2,
    ),
  );
  console.log(`results written to ${path}`);
}
process.exit(0);
