// bench/console.ts: the console at fleet scale, in a real Chromium. Sets up N workers and M waiting
// requests through the API server (statuses written as the agents and the controller would; none
// runs), starts the console, opens the Requests page, and prints: first paint, the time until the
// last waiting row is on screen, and the time from a Worker status write to the change on screen,
// p50 and p99 over `--writes` writes. Targets (issue 15): first paint and an update under 1 s.
//
//   npm run bench:console [-- --workers 1000 --requests 1000 --writes 50 --json FILE]
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { startConsole } from '../console/index.js';
import { silentLogger, simlockPath, type KubeClient } from '../runtime/index.js';
import type { WorkerStatus } from '../api/index.js';
import { iosCapacity, iosStatus, iphoneSimulator, launchBrowser } from '../test/index.js';
import {
  CommandLine,
  createNamespace,
  inParallel,
  log,
  machineName,
  percentile,
  startBenchControlPlane,
} from './harness/index.js';

const args = new CommandLine();
args.only(['--workers', '--requests', '--writes', '--json']);
const workerCount = args.integer('--workers', 1000);
const requestCount = args.integer('--requests', 1000);
const writes = args.integer('--writes', 50);
const jsonPath = args.optionalValue('--json');
const NAMESPACE = 'bench';

/** A worker with both iOS slots taken by leased simulators. */
function workerStatus(health: 'running' | 'unhealthy'): WorkerStatus {
  return iosStatus({
    agentVersion: 'bench',
    health,
    capacity: iosCapacity({ running: 2 }, { running: 2 }),
    devices: [1, 2].map((index) =>
      iphoneSimulator(`SIM-${index}`, { name: `iPhone 16 (${index})`, state: 'leased' }),
    ),
  });
}

async function setUp(admin: KubeClient, workers: string[]): Promise<void> {
  await createNamespace(admin, NAMESPACE);
  await createNamespace(admin, 'simlock-system');
  await inParallel(workers, 16, async (name) => {
    await admin.create(simlockPath('worker'), {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'Worker',
      metadata: { name },
      spec: { label: name.replace('worker-', 'host ') },
    });
    await admin.patch(simlockPath('worker', { name, subresource: 'status' }), {
      status: workerStatus('running'),
    });
  });
  log(`${workers.length} workers written`);
  const requests = Array.from({ length: requestCount }, (_, index) => `req-${index}`);
  await inParallel(requests, 16, async (name, index) => {
    await admin.create(simlockPath('leaseRequest', { namespace: NAMESPACE }), {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'LeaseRequest',
      metadata: { name },
      spec: { platform: 'ios', model: 'iPhone 16', holder: `ci-${index}` },
    });
    // One reason per worker for the first request (the one the page inspects); a summary only for
    // the others, which keeps the setup to minutes (a million reasons would be 70 MB in etcd).
    await admin.patch(
      simlockPath('leaseRequest', { namespace: NAMESPACE, name, subresource: 'status' }),
      {
        status: {
          phase: 'Waiting',
          position: index + 1,
          queuedAt: new Date().toISOString(),
          summary: `${workers.length} workers: ${workers.length} full`,
          ...(index === 0
            ? {
                workers: workers.map((worker) => ({
                  worker,
                  reason: 'full',
                  capacityReason: 'platform-running-limit',
                })),
              }
            : {}),
        },
      },
    );
  });
  log(`${requestCount} waiting requests written`);
}

async function main(): Promise<void> {
  const cluster = await startBenchControlPlane();
  const browser = await launchBrowser();
  const workers = Array.from(
    { length: workerCount },
    (_, index) => `worker-${String(index).padStart(4, '0')}`,
  );
  try {
    await setUp(cluster.admin, workers);
    const consoleServer = await startConsole({
      client: cluster.admin,
      mode: 'local',
      log: silentLogger,
    });
    // The page's CSP forbids string evaluation, which waitForFunction's string predicates need.
    const context = await browser.browser.newContext({
      viewport: { width: 1280, height: 800 },
      bypassCSP: true,
    });
    const page = await context.newPage();
    // Log in first (the key's redirect), so the measured load is the Requests page alone.
    await page.goto(consoleServer.openUrl);
    await page.locator('#waiting').waitFor();
    await page.goto(`${consoleServer.url}/requests`);
    await page.waitForFunction(
      `document.querySelectorAll('#waiting tbody tr').length === ${requestCount}`,
      undefined,
      { polling: 'raf', timeout: 120_000 },
    );
    const lastRowMs = await page.evaluate<number>('performance.now()');
    const firstPaintMs = await page.evaluate<number>(
      "performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1",
    );
    log(
      `first paint ${firstPaintMs.toFixed(0)} ms, last of ${requestCount} rows ${lastRowMs.toFixed(0)} ms`,
    );

    const latencies: number[] = [];
    for (let index = 0; index < writes; index++) {
      const unhealthy = index % 2 === 0;
      const expected = `${unhealthy ? 1 : 0} unhealthy`;
      // An observer in the page notes the moment the summary says what the write makes it say.
      await page.evaluate(`(() => {
        window.simlockSeen = undefined;
        const target = document.querySelector('#fleet-summary');
        const observer = new MutationObserver(() => {
          if (target.textContent.includes(${JSON.stringify(expected)})) {
            window.simlockSeen = Date.now();
            observer.disconnect();
          }
        });
        observer.observe(target, { childList: true, subtree: true, characterData: true });
      })()`);
      const written = Date.now();
      await cluster.admin.patch(
        simlockPath('worker', { name: workers[0] ?? '', subresource: 'status' }),
        { status: workerStatus(unhealthy ? 'unhealthy' : 'running') },
      );
      await page.waitForFunction('window.simlockSeen !== undefined', undefined, {
        polling: 'raf',
        timeout: 10_000,
      });
      latencies.push((await page.evaluate<number>('window.simlockSeen')) - written);
    }
    const figures = {
      machine: machineName(),
      workers: workerCount,
      requests: requestCount,
      firstPaintMs: Math.round(firstPaintMs),
      lastRowMs: Math.round(lastRowMs),
      updateP50Ms: percentile(latencies, 50),
      updateP99Ms: percentile(latencies, 99),
      writes,
    };
    console.log(
      `console with ${workerCount} workers and ${requestCount} waiting requests (${figures.machine})`,
    );
    console.log(`  first paint:                     ${figures.firstPaintMs} ms`);
    console.log(`  last waiting row on screen:      ${figures.lastRowMs} ms`);
    console.log(`  status write to screen, p50:     ${figures.updateP50Ms} ms`);
    console.log(`  status write to screen, p99:     ${figures.updateP99Ms} ms (${writes} writes)`);
    if (jsonPath) {
      await mkdir(dirname(jsonPath), { recursive: true });
      await writeFile(jsonPath, JSON.stringify(figures, null, 2) + '\n');
    }
    await context.close();
    await consoleServer.stop();
  } finally {
    await browser.close();
    await cluster.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
