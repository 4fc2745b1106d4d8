// Write economy of the controller: what it writes to the API server when little or nothing
// changes, and what a waiting request costs to store. On a control plane of its own, with the
// controller as a real process and W workers played by this program (Worker objects with a status
// and a heartbeat Lease, as test/cluster/fleet.ts does: a thousand agent processes would measure
// the agents, not the controller):
//   1. writes per walk when nothing changed: requests wait on full workers; a drained worker's view
//      changes again and again (each change is a walk, and changes no reason). Target: 0.
//   2. bytes of LeaseRequest status per waiting request at W workers (one reason per worker).
//   3. writes per second while R requests wait and workers churn: C times a second a worker's view
//      flips between two kinds of full, which changes that worker's reason in every waiting request.
// The controller's writes are its own count (simlock_api_writes_total on its /metrics).
//
//   node --import tsx bench/write-economy.ts [--workers 1000] [--requests 1000] [--churn 10]
//     [--seconds 30] [--progress-rates 100,0] [--json [FILE]]
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  heartbeatLeaseName,
  reasonsByWorker,
  type WorkerReasonItem,
  type WorkerStatus,
} from '../api/index.js';
import { iosCapacity, iosStatus } from '../test/index.js';
import {
  coordinationLeasePath,
  microTime,
  simlockPath,
  type KubeClient,
} from '../runtime/index.js';
import {
  FLEET_LABEL,
  CommandLine,
  cpuCount,
  createNamespace,
  inParallel,
  machineName,
  median,
  outDir,
  startBenchControlPlane,
  startController,
  waitUntil,
  log,
} from './harness/index.js';

const line = new CommandLine();
line.only(['--workers', '--requests', '--churn', '--seconds', '--progress-rates', '--json']);
const workerCount = line.integer('--workers', 1000);
const requestCount = line.integer('--requests', 1000);
const churnPerSecond = line.integer('--churn', 10);
const seconds = line.integer('--seconds', 30);
const progressRates = (line.list('--progress-rates') ?? ['100', '0']).map(Number);
const jsonPath = line.optionalValue('--json');

/** A worker at its iOS running limit (or, `globalOnly`, at its global limit only). */
function fullStatus(globalOnly: boolean, running = 2): WorkerStatus {
  return iosStatus({
    agentVersion: '0.1.0-bench',
    capacity: iosCapacity({ limit: globalOnly ? 4 : 2, running }, { limit: 2, running }),
  });
}

async function addWorker(
  admin: KubeClient,
  name: string,
  tag: string,
  systemNamespace: string,
  drained = false,
): Promise<void> {
  await admin.create(simlockPath('worker'), {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'Worker',
    metadata: { name, labels: { [FLEET_LABEL]: tag } },
    spec: { drained },
  });
  await admin.patch(simlockPath('worker', { name, subresource: 'status' }), {
    status: fullStatus(false),
  });
  await admin.create(coordinationLeasePath(systemNamespace), {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: heartbeatLeaseName(name), namespace: systemNamespace },
    spec: { holderIdentity: name, leaseDurationSeconds: 3600, renewTime: microTime(Date.now()) },
  });
}

async function measure(progressRate: number, dir: string) {
  const cluster = await startBenchControlPlane();
  const { admin, controlPlane } = cluster;
  const tag = `economy-p${progressRate}`;
  const systemNamespace = `simlock-${tag}`;
  const namespace = `requests-${tag}`;
  await createNamespace(admin, systemNamespace);
  await createNamespace(admin, namespace);
  const names = Array.from(
    { length: workerCount },
    (_, index) => `w-${String(index).padStart(4, '0')}`,
  );
  log(`${tag}: ${workerCount} workers, all full, one drained`);
  await inParallel(names, 20, (name, index) =>
    addWorker(admin, name, tag, systemNamespace, index === 0),
  );
  const controller = await startController({
    kubeconfigPath: controlPlane.kubeconfigPath,
    systemNamespace,
    watchNamespace: namespace,
    workerSelector: `${FLEET_LABEL}=${tag}`,
    extraArgs: ['--progress-writes-per-second', String(progressRate)],
    logPath: join(dir, `controller-${tag}.log`),
  });
  const metric = async (name: string) => (await controller.metrics())[name] ?? 0;
  try {
    log(`${tag}: ${requestCount} requests, waiting`);
    await inParallel(
      Array.from({ length: requestCount }, (_, index) => `r-${index}`),
      32,
      async (name) => {
        await admin.create(simlockPath('leaseRequest', { namespace }), {
          apiVersion: 'simlock.dev/v1alpha1',
          kind: 'LeaseRequest',
          metadata: { name },
          spec: { platform: 'ios', model: 'iPhone 16', waitTimeoutSeconds: 3600 },
        });
      },
    );
    // Every request written Waiting with its reasons, and the writes settled. (Listing them all
    // to check would move tens of MiB a time: the controller's own count says it, and a sample is
    // read back.)
    await waitUntil(
      async () => (await metric('simlock_status_writes_total')) >= requestCount,
      600_000,
      'a status written for every request',
      1000,
    );
    let settledAt = await metric('simlock_api_writes_total');
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const now = await metric('simlock_api_writes_total');
      if (now === settledAt) break;
      settledAt = now;
    }

    // 2. Bytes of status per waiting request, from a sample of them read back.
    const sample = (await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        admin.get(
          simlockPath('leaseRequest', {
            namespace,
            name: `r-${Math.floor((index * requestCount) / 20)}`,
          }),
        ),
      ),
    )) as { status?: { workers?: WorkerReasonItem[] } }[];
    const complete = sample.filter((item) => reasonsByWorker(item.status).length === workerCount);
    if (complete.length < sample.length)
      throw new Error(`${sample.length - complete.length} of 20 sampled requests lack reasons`);
    const statusBytes = median(sample.map((item) => JSON.stringify(item.status).length));
    const objectBytes = median(sample.map((item) => JSON.stringify(item).length));

    // 1. Walks with nothing changed: the drained worker's running count moves; no reason does.
    log(`${tag}: walks that change nothing`);
    const walksBefore = await metric('simlock_walks_total');
    const quietBefore = await metric('simlock_api_writes_total');
    const quietChanges = 20;
    for (let change = 1; change <= quietChanges; change++) {
      await admin.patch(simlockPath('worker', { name: names[0] ?? '', subresource: 'status' }), {
        status: fullStatus(false, change % 2 === 0 ? 2 : 1),
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const quietWalks = (await metric('simlock_walks_total')) - walksBefore;
    const quietWrites = (await metric('simlock_api_writes_total')) - quietBefore;

    // 3. Churn: workers flip between two kinds of full.
    log(`${tag}: ${churnPerSecond} worker changes a second for ${seconds} s`);
    const churnBefore = await metric('simlock_api_writes_total');
    const statusBefore = await metric('simlock_status_writes_total');
    const started = performance.now();
    let flips = 0;
    while (performance.now() - started < seconds * 1000) {
      const name = names[1 + (flips % (names.length - 1))] ?? '';
      const round = Math.floor(flips / (names.length - 1));
      await admin.patch(simlockPath('worker', { name, subresource: 'status' }), {
        status: fullStatus(round % 2 === 0),
      });
      flips++;
      const due = started + (flips * 1000) / churnPerSecond;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
    }
    const elapsed = (performance.now() - started) / 1000;
    const churnWrites = (await metric('simlock_api_writes_total')) - churnBefore;
    const churnStatusWrites = (await metric('simlock_status_writes_total')) - statusBefore;

    return {
      progressWritesPerSecond: progressRate,
      workers: workerCount,
      requests: requestCount,
      quiet: {
        walks: quietWalks,
        writes: quietWrites,
        writesPerWalk: quietWrites / Math.max(1, quietWalks),
      },
      statusBytesPerRequest: statusBytes,
      objectBytesPerRequest: objectBytes,
      churn: {
        changesPerSecond: flips / elapsed,
        writesPerSecond: churnWrites / elapsed,
        statusWritesPerSecond: churnStatusWrites / elapsed,
      },
    };
  } finally {
    await controller.stop();
    await cluster.stop();
  }
}

const dir = await outDir('write-economy');
const results = [];
for (const rate of progressRates) results.push(await measure(rate, dir));
console.log(`write economy: machine ${machineName()} (${cpuCount()} CPUs)`);
for (const result of results) {
  const rate =
    result.progressWritesPerSecond === 0 ? 'unlimited' : `${result.progressWritesPerSecond}/s`;
  console.log(
    `progress writes ${rate}, ${result.workers} workers, ${result.requests} waiting requests:`,
  );
  console.log(
    `  walks that change nothing: ${result.quiet.walks} walks, ${result.quiet.writes} writes (${result.quiet.writesPerWalk.toFixed(2)} per walk; target 0)`,
  );
  console.log(
    `  LeaseRequest status per waiting request: ${(result.statusBytesPerRequest / 1024).toFixed(1)} KiB (whole object ${(result.objectBytesPerRequest / 1024).toFixed(1)} KiB)`,
  );
  console.log(
    `  churn ${result.churn.changesPerSecond.toFixed(1)} worker changes/s: ${result.churn.writesPerSecond.toFixed(1)} writes/s (${result.churn.statusWritesPerSecond.toFixed(1)} status writes/s)`,
  );
}
if (line.has('--json')) {
  const path = jsonPath ?? join(dir, 'results.json');
  await writeFile(
    path,
    JSON.stringify({ machine: machineName(), cpus: cpuCount(), results }, null, 2),
  );
  console.log(`results written to ${path}`);
}
process.exit(0);
