// simlock: the controller (a real process) and W fake-driver agents (one process,
// bench/agent-host.ts; every worker has warm simulators to spare, so each grant is instant) granting
// N LeaseRequests.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REQUEST_FINALIZER, leaseNamespaceOf } from '../../api/index.js';
import { Informer, simlockPath, type KubeObject } from '../../runtime/index.js';
import type { HostedWorker } from '../agent-host.js';
import {
  FLEET_LABEL,
  LoopLagPoller,
  createNamespace,
  log,
  percentile,
  seconds,
  startAgentHost,
  startController,
  waitUntil,
} from '../harness/index.js';
import { profileApiServer } from './apiserver-profile.js';
import { delta, type SideContext, type SideResult } from './measure.js';
import { runSide } from './side.js';

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
  // What was started is stopped if the stage does not come up: a side that failed must not leave
  // a thousand agents retrying beside the runs that follow.
  let controller: Awaited<ReturnType<typeof startController>> | undefined;
  try {
    controller = await startController({
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
  } catch (error) {
    await controller?.stop();
    await host.stop();
    throw error;
  }
  if (options.idleSeconds > 0) {
    // Idle means settled: the controller makes each worker's Lease namespace when it first sees
    // the Worker (ADR 0034), a write a worker once in its life, which would count as the fleet's.
    const wanted = new Set(workers.map((worker) => leaseNamespaceOf(worker.name)));
    await waitUntil(
      async () => {
        const list = (await admin.get('/api/v1/namespaces')) as {
          items: { metadata: { name: string } }[];
        };
        return list.items.filter((item) => wanted.has(item.metadata.name)).length === wanted.size;
      },
      300_000,
      "every worker's Lease namespace made",
      500,
    );
  }

  const granted = new Set<string>();
  const failed = new Set<string>();
  // When each request was first seen in each phase, for the timeline in the JSON.
  const seen = new Map<string, Record<string, number>>();
  // The field selector filters nothing (the path is the namespace's): it tells this watch from the
  // controller's in kube-apiserver's log of watchers it closed as unresponsive.
  const requests = new Informer(admin, {
    path: simlockPath('leaseRequest', { namespace }),
    fieldSelector: `metadata.namespace=${namespace}`,
  });
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
  let controllerBefore: Record<string, number> = {};
  let agentsBefore: Record<string, number> = {};
  let profile: Promise<void> | undefined;
  const loopLag = new LoopLagPoller(() => controller.metrics());
  return runSide(context, {
    item: 'lr',
    create: async (name) => {
      await admin.create(simlockPath('leaseRequest', { namespace }), {
        apiVersion: 'simlock.dev/v1alpha1',
        kind: 'LeaseRequest',
        // As `kubectl simlock lease` makes them: with the controller's release finalizer.
        metadata: { name, finalizers: [REQUEST_FINALIZER] },
        spec: { platform: 'ios', model: 'iPhone 16', holder: 'bench' },
      });
    },
    done: granted,
    settled: () => granted.size + failed.size,
    what: 'every request granted',
    // A worker's Lease namespace is made at its first dispatch (ADR 0034): counted, once a worker.
    keep: (key) =>
      key.includes('simlock.dev/') || key.includes('events') || key.startsWith('POST namespaces'),
    // The agents write devices taken 5 s after the first (viewTakenDelayMs, ADR 0029), other
    // view changes debounced (1 s): the side's end waits for them, and counts them.
    tailMs: 5000 + 1500,
    creates: ['POST simlock.dev/leaserequests'],
    beforeClock: async () => {
      controllerBefore = await controller.metrics();
      agentsBefore = await host.writes();
    },
    clockStarted: () => {
      loopLag.start();
      if (options.apiserverProfileSeconds === undefined) return;
      const seconds = options.apiserverProfileSeconds;
      const after = options.apiserverProfileDelaySeconds;
      profile = new Promise((resolve) => setTimeout(resolve, after * 1000))
        .then(() =>
          profileApiServer(controlPlane, seconds, join(dir, `kube-apiserver-${tag}.pprof`)),
        )
        .then(
          (path) => log(`  kube-apiserver profile: ${path}`),
          (error: unknown) => log(`  kube-apiserver profile failed: ${String(error)}`),
        );
    },
    extra: async (_end, start) => {
      await profile;
      const clientWrites = clientWritesSince(
        controllerBefore,
        await controller.metrics(),
        agentsBefore,
        await host.writes(),
      );
      const timeline = await timelineOf(seen, start.started, join(dir, `timeline-${tag}.json`));
      const controllerLoopLagMaxMs = await loopLag.stop();
      return { failed: failed.size, timeline, clientWrites, controllerLoopLagMaxMs };
    },
    stop: async () => {
      await loopLag.stop();
      await requests.stop();
      await controller.stop();
      await host.stop();
    },
  });
}

/** The writes the controller and the agents counted themselves during the side. */
function clientWritesSince(
  controllerBefore: Record<string, number>,
  controllerAfter: Record<string, number>,
  agentsBefore: Record<string, number>,
  agentsAfter: Record<string, number>,
): Record<string, number> {
  const total = (writes: Record<string, number>) =>
    Object.values(writes).reduce((sum, value) => sum + value, 0);
  return {
    controller: delta(controllerBefore, controllerAfter, 'simlock_api_writes_total'),
    controllerStatus: delta(controllerBefore, controllerAfter, 'simlock_status_writes_total'),
    controllerWalks: delta(controllerBefore, controllerAfter, 'simlock_walks_total'),
    controllerWalkSeconds: delta(
      controllerBefore,
      controllerAfter,
      'simlock_walk_duration_seconds_sum',
    ),
    agents: total(agentsAfter) - total(agentsBefore),
  };
}

/**
 * How the requests went, from when each was first seen in each phase (ms since the clock
 * started); with BENCH_TIMELINE set, every request's phases are written to `path` too.
 */
async function timelineOf(
  seen: Map<string, Record<string, number>>,
  started: number,
  path: string,
): Promise<Record<string, number | null>> {
  const phases = [...seen.values()];
  const after = (from: string, to: string) =>
    phases.flatMap((entry) =>
      entry[from] !== undefined && entry[to] !== undefined ? [entry[to] - entry[from]] : [],
    );
  if (process.env.BENCH_TIMELINE) {
    await writeFile(
      path,
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
  const dispatchedToGranted = after('Dispatched', 'Granted');
  return {
    waited: phases.filter((entry) => entry.Waiting !== undefined).length,
    createdToGrantedP50Ms: percentile(after('Created', 'Granted'), 50),
    createdToGrantedP99Ms: percentile(after('Created', 'Granted'), 99),
    // Only requests seen Dispatched (a status written when the grant took over a second).
    dispatchedSamples: dispatchedToGranted.length,
    dispatchedToGrantedP50Ms:
      dispatchedToGranted.length > 0 ? percentile(dispatchedToGranted, 50) : null,
    dispatchedToGrantedP99Ms:
      dispatchedToGranted.length > 0 ? percentile(dispatchedToGranted, 99) : null,
    lastCreatedMs: Math.max(...phases.map((entry) => (entry.Created ?? started) - started)),
  };
}
