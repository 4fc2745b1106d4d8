// simlock: the controller (a real process) and W fake-driver agents (one process,
// bench/agent-host.ts; every worker has warm simulators to spare, so each grant is instant) granting
// N LeaseRequests.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REQUEST_FINALIZER } from '../../api/index.js';
import { Informer, simlockPath, type KubeObject } from '../../runtime/index.js';
import type { HostedWorker } from '../agent-host.js';
import {
  createNamespace,
  FLEET_LABEL,
  inParallel,
  log,
  percentile,
  seconds,
  startAgentHost,
  startController,
  waitUntil,
} from '../harness/index.js';
import {
  delta,
  endOfSide,
  sideResult,
  startOfSide,
  type SideContext,
  type SideResult,
} from './measure.js';
import { profileApiServer } from './apiserver-profile.js';

function workerScript(name: string, slots: number): HostedWorker {
  return {
    name,
    script: {
      models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
      runtimes: [{ platform: 'ios', version: '18.4' }],
      devices: Array.from({ length: slots }, (_, index) => ({
        id: `${name}-sim-${index}`,
        name: 'iPhone 16',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
        booted: true,
      })),
      bootMs: 0,
    },
    config: { limits: { running: slots, platforms: { ios: { running: slots } } } },
  };
}

export async function simlockSide(context: SideContext): Promise<SideResult> {
  const { admin, controlPlane } = context.cluster;
  const { size, qps, dir, tag, options } = context;
  const cpuProfile = options.cpuProfile;
  const systemNamespace = `simlock-${tag}`;
  const namespace = `requests-${tag}`;
  await createNamespace(admin, systemNamespace);
  await createNamespace(admin, namespace);
  // Every worker has room for a fifth more than its share: a grant never waits for a slot.
  const slots = Math.ceil((size.requests / size.workers) * 1.2);
  const workers = Array.from({ length: size.workers }, (_, index) =>
    workerScript(`w-${tag}-${String(index).padStart(4, '0')}`, slots),
  );
  const agentsStarted = performance.now();
  const host = await startAgentHost({
    kubeconfigPath: controlPlane.kubeconfigPath,
    systemNamespace,
    fleetLabel: tag,
    workers,
    agentConfig: {
      heartbeat: { durationSeconds: 600, renewEverySeconds: 150 },
    },
    logPath: join(dir, `agents-${tag}.log`),
    cpuProfileDir: cpuProfile ? dir : undefined,
  });
  log(`  ${size.workers} agents up in ${seconds(performance.now() - agentsStarted)}`);
  const controller = await startController({
    kubeconfigPath: controlPlane.kubeconfigPath,
    systemNamespace,
    watchNamespace: namespace,
    workerSelector: `${FLEET_LABEL}=${tag}`,
    qps,
    burst: qps * 2,
    cpuProfileDir: cpuProfile ? dir : undefined,
    logPath: join(dir, `controller-${tag}.log`),
    extraArgs: options.controllerArgs,
  });
  // The controller has seen every worker: a request made now can be routed at once.
  await waitUntil(
    async () => {
      const workerList = (await admin.get(simlockPath('worker'), {
        query: { labelSelector: `${FLEET_LABEL}=${tag}` },
      })) as { items: { status?: { health?: string } }[] };
      return (
        workerList.items.filter((worker) => worker.status?.health === 'running').length ===
        size.workers
      );
    },
    120_000,
    'every worker running',
  );

  const granted = new Set<string>();
  const failed = new Set<string>();
  // When each request was first seen in each phase, for the timeline in the JSON.
  const seen = new Map<string, Record<string, number>>();
  const requests = new Informer(admin, { path: simlockPath('leaseRequest', { namespace }) });
  const phaseOf = (object: KubeObject) => (object.status as { phase?: string } | undefined)?.phase;
  requests.on((event) => {
    if (event.type === 'deleted') return;
    const name = event.object.metadata.name;
    const phase = phaseOf(event.object) ?? 'Created';
    const phases = seen.get(name) ?? {};
    phases[phase] ??= performance.now();
    seen.set(name, phases);
    if (phase === 'Granted') granted.add(name);
    if (phase === 'Failed') failed.add(name);
  });
  requests.start();
  await requests.waitForSync();
  try {
    const controllerBefore = await controller.metrics();
    const agentsBefore = await host.writes();
    const start = await startOfSide(admin);
    const started = start.started;
    const profile =
      options.apiserverProfileSeconds === undefined
        ? undefined
        : profileApiServer(
            controlPlane,
            options.apiserverProfileSeconds,
            join(dir, `kube-apiserver-${tag}.pprof`),
          ).then(
            (path) => log(`  kube-apiserver profile: ${path}`),
            (error: unknown) => log(`  kube-apiserver profile failed: ${String(error)}`),
          );
    const names = Array.from({ length: size.requests }, (_, index) => `lr-${index}`);
    await inParallel(names, options.concurrency, async (name) => {
      await admin.create(simlockPath('leaseRequest', { namespace }), {
        apiVersion: 'simlock.dev/v1alpha1',
        kind: 'LeaseRequest',
        // As `kubectl simlock lease` makes them: with the controller's release finalizer.
        metadata: { name, finalizers: [REQUEST_FINALIZER] },
        spec: { platform: 'ios', model: 'iPhone 16', holder: 'bench' },
      });
    });
    // The last view writes are debounced by the agents (1 s): endOfSide lets them land.
    const end = await endOfSide(admin, start, {
      done: () => granted.size + failed.size >= size.requests,
      what: 'every request granted',
      timeoutMs: options.sideTimeoutMs,
      keep: (key) => key.includes('simlock.dev/') || key.includes('events'),
      creates: { 'POST simlock.dev/leaserequests': size.requests },
    });
    await profile;
    const controllerAfter = await controller.metrics();
    const agentsAfter = await host.writes();
    const clientWrites: Record<string, number> = {
      controller: delta(controllerBefore, controllerAfter, 'simlock_api_writes_total'),
      controllerStatus: delta(controllerBefore, controllerAfter, 'simlock_status_writes_total'),
      controllerWalks: delta(controllerBefore, controllerAfter, 'simlock_walks_total'),
      controllerWalkSeconds: delta(
        controllerBefore,
        controllerAfter,
        'simlock_walk_duration_seconds_sum',
      ),
      agents:
        Object.values(agentsAfter).reduce((sum, value) => sum + value, 0) -
        Object.values(agentsBefore).reduce((sum, value) => sum + value, 0),
    };
    const phases = [...seen.values()];
    const after = (from: string, to: string) =>
      phases.flatMap((entry) =>
        entry[from] !== undefined && entry[to] !== undefined ? [entry[to] - entry[from]] : [],
      );
    if (process.env.BENCH_TIMELINE) {
      await writeFile(
        join(dir, `timeline-${tag}.json`),
        JSON.stringify(
          [...seen].map(([name, entry]) => [
            name,
            Object.fromEntries(
              Object.entries(entry).map(([phase, at]) => [phase, Math.round(at - started)]),
            ),
          ]),
        ),
      );
    }
    const timeline = {
      waited: phases.filter((entry) => entry.Waiting !== undefined).length,
      createdToGrantedP50Ms: percentile(after('Created', 'Granted'), 50),
      createdToGrantedP99Ms: percentile(after('Created', 'Granted'), 99),
      // Only requests seen Dispatched (a status written when the grant took over a second).
      dispatchedSamples: after('Dispatched', 'Granted').length,
      dispatchedToGrantedP50Ms:
        after('Dispatched', 'Granted').length > 0
          ? percentile(after('Dispatched', 'Granted'), 50)
          : null,
      dispatchedToGrantedP99Ms:
        after('Dispatched', 'Granted').length > 0
          ? percentile(after('Dispatched', 'Granted'), 99)
          : null,
      lastCreatedMs: Math.max(...phases.map((entry) => (entry.Created ?? started) - started)),
    };
    return sideResult(end, granted.size, size.requests, {
      failed: failed.size,
      timeline,
      clientWrites,
    });
  } finally {
    await requests.stop();
    await controller.stop();
    await host.stop();
  }
}
