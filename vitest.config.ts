import { mkdirSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { defineConfig } from 'vitest/config';
import KindFirstSequencer from './test/kind-first-sequencer.js';

// Processes the tests start by name (the plugin's `exec node`, npx) run on the Node that runs the
// tests, as those started with process.execPath do: tools/test.sh picks Node 24 or 22 for a run,
// and nothing in it may quietly fall back to the machine's own node. The folder put first on PATH
// holds only a `node` link, so that it shadows nothing else (as /usr/bin would).
process.env.PATH = [nodeOnlyFolder(process.execPath), process.env.PATH].join(delimiter);

function nodeOnlyFolder(node: string): string {
  const folder = join(import.meta.dirname, '.simlock', 'node', process.version);
  const link = join(folder, 'node');
  let target: string | undefined;
  try {
    target = readlinkSync(link);
  } catch {
    // Not made yet.
  }
  if (target !== node) {
    mkdirSync(folder, { recursive: true });
    // A link made aside and renamed over: two runs starting at once each leave a whole link.
    const aside = `${link}.${process.pid}`;
    symlinkSync(node, aside);
    renameSync(aside, link);
  }
  return folder;
}

// Three projects: `unit` (pure code, beside it as foo.test.ts), `cluster` (anything that touches
// Kubernetes: *.cluster.test.ts beside the code, and e2e/) and `kind` (e2e/kind/: the image, the
// chart's pods on a kind cluster). The cluster project starts one real control plane per run in
// its global setup and gives each test file its own namespace; the kind project's global setup
// builds kind and its node image (tools/kind). The cluster and kind projects run as one group, the
// kind files first (test/kind-first-sequencer.ts): the install test is minutes of waiting on
// kubeadm, rollouts and probes, and after the cluster tier it kept the cores a third idle (the
// suite 11 m 33 s so, 8 m 00 s beside it: docs/adr/0037, docs/PERFORMANCE.md §7).
export default defineConfig({
  // Vitest keeps each file's last duration here and runs the longest first; outside the checkout
  // (not node_modules/.vite, which a fresh clone's npm ci starts empty), so that a fresh clone too
  // starts the cluster tier's long files first and ends on short ones, instead of ordering by size.
  // Files are named relative to the root, so every clone shares it.
  cacheDir: join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'simlock', 'vitest'),
  test: {
    sequence: { sequencer: KindFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            '{api,runtime,client,controller,agent,proxy,cli,console,tools,bench,test}/**/*.test.ts',
          ],
          exclude: ['**/*.cluster.test.ts', 'node_modules/**'],
          // Pure code: the files of a worker share their imported modules instead of importing
          // zod, client-node and our folders afresh for each (the unit project took 90 s, two
          // thirds of it imports; 26 s so). A unit test therefore leaves no global state behind:
          // real timers restored, no environment changed, no module mocked.
          isolate: false,
          setupFiles: ['test/unit/shared-worker-guard.ts'],
        },
      },
      {
        test: {
          name: 'cluster',
          sequence: { groupOrder: 1 },
          include: ['**/*.cluster.test.ts', 'e2e/**/*.test.ts'],
          exclude: ['node_modules/**', 'e2e/kind/**'],
          globalSetup: ['test/cluster/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Four files at a time on two cores, the kind project's included (one group, one
          // maxWorkers): the kind install test and three cluster files for most of the run. The
          // longest files mostly wait (idle timeouts, expiries, a fault's timeline): the suite took
          // 10 m 20 s with two cluster files at a time, 9 m 00 s with three; the tier alone 293 s
          // with three, 257 s with four, the same CPU (docs/PERFORMANCE.md §7).
          maxWorkers: 4,
          // A worker's files share its imported modules (client-node, zod, our folders), as the
          // unit project's do: the tier took 378 s and 601 s of CPU with a fresh import per file,
          // 317 s and 491 s so (docs/PERFORMANCE.md §7). Every file makes its own namespace,
          // clients and processes (useCluster); the guard fails a file that leaves fake timers on
          // or the environment changed for the files after it.
          isolate: false,
          setupFiles: ['test/unit/shared-worker-guard.ts'],
        },
      },
      {
        test: {
          name: 'kind',
          sequence: { groupOrder: 1 },
          include: ['e2e/kind/**/*.test.ts'],
          globalSetup: ['e2e/kind/global-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
          // The group's (above). Each file has its own kind run, network and containers; the image
          // file's docker build and the install test's may overlap (BuildKit shares their layers).
          maxWorkers: 4,
        },
      },
    ],
  },
});
