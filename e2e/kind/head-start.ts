// The kind tier's first steps (the release's files built: the plugin, the chart, the image with
// docker build; then docs/INSTALL.md's steps 0 and 1: the plugin on PATH, kind create cluster,
// kind load image-archive) started while the cluster tier's last files still run: they leave a
// core mostly idle, and the steps are minutes of waiting on kubeadm and docker. Started any earlier, the idle kind node would cost the cluster tier a
// fifth of the machine for minutes (measured: 19 % of two cores).
//
// Three places take part, all in the vitest process but the last: the kind global setup makes the
// cluster's KindRun and the doc's shell (doc-run.ts), and offers `headStart()` (on globalThis,
// which the reporter shares);
// HeadStartReporter calls it once few cluster files are left; the install test, in its worker,
// waits for the status file. Whoever creates the status file first (exclusively) does the work:
// when the reporter never fired (no cluster files in the run, another reporter asked for), the
// test does it itself.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../../test/cluster/harness.js';
import type { DocRun } from './doc-run.js';
import { repositoryRoot } from './kind.js';
import { buildReleaseFiles } from './release-files.js';

type Status = { state: 'started' } | { state: 'ready' } | { state: 'failed'; message: string };

export const headStartStatusFile = join(repositoryRoot, '.simlock', 'kind-head-start.json');

/** The handle the global setup leaves for the reporter. */
interface HeadStartHandle {
  start?: () => void;
  /** Asked before the global setup offered `start`: it starts as soon as it is offered. */
  wanted?: boolean;
}
const handleKey = Symbol.for('simlock.kind.headStart');
function handle(): HeadStartHandle {
  const shared = globalThis as { [handleKey]?: HeadStartHandle };
  return (shared[handleKey] ??= {});
}

/** The reporter's side: start it now (at most once; nothing if the kind tier is not in the run). */
export function requestHeadStart(): void {
  const current = handle();
  if (current.start) current.start();
  else current.wanted = true;
}

/** The global setup's side: the work, offered to the reporter; answers a promise of its end. */
export function offerHeadStart(run: DocRun): { settled: () => Promise<void> } {
  let running: Promise<void> | undefined;
  const start = () => {
    running ??= claim()
      .then((mine) => {
        if (!mine) return;
        console.log(
          'kind tier: head start begun (the release built, kind create cluster, kind load image-archive)',
        );
        return prepareAndRecord(run);
      })
      // The install test, waiting on the status file, says so at its deadline.
      .catch((error: unknown) => console.error(`kind head start: ${(error as Error).message}`));
  };
  const current = handle();
  current.start = start;
  if (current.wanted) start();
  return { settled: () => running ?? Promise.resolve() };
}

/** The release's files, then docs/INSTALL.md's steps 0 and 1, and what they print. */
export async function prepareCluster(run: DocRun): Promise<void> {
  await buildReleaseFiles(run.kind, run.place.release);
  await run.step('setup', {
    timeoutMs: 120_000,
    shows: [
      // Each file of the release checked against SHA256SUMS; the plugin found by kubectl.
      /^kubectl-simlock-\w+-\w+\.tar\.gz: OK$/,
      'simlock-0.1.0.tgz: OK',
      'simlock-image-0.1.0.tar: OK',
      'simlock.yaml: OK',
      /^\/\S+\/simlock-try\/bin\/kubectl-simlock$/,
    ],
  });
  try {
    await run.step('cluster', {
      timeoutMs: 1_200_000,
      shows: [/^Set kubectl context to "kind-[\w-]+"$/, 'Loaded image: simlock:0.1.0'],
    });
  } catch (error) {
    // What kubeadm, kubelet and containerd said, when the node did not come up.
    throw new Error(
      `${(error as Error).message}\n--- the node's journal\n${await run.kind.nodeLogs()}`,
    );
  }
}

/**
 * The install test's side: the cluster made by the head start, or made here when nobody started
 * it. Throws what failed.
 */
export async function clusterReady(run: DocRun, timeoutMs: number): Promise<void> {
  if (await claim()) return prepareAndRecord(run).then(() => checkStatus());
  // Unreadable (being written) counts as still under way.
  const settled = async () => {
    const state = (await readStatus())?.state;
    return state === undefined || state === 'started' ? undefined : true;
  };
  await eventually(settled, {
    timeoutMs,
    intervalMs: 500,
    what: 'the kind head start (release, create, load)',
  });
  await checkStatus();
}

/** Makes the status file if nobody has: true when this caller is to do the work. */
async function claim(): Promise<boolean> {
  try {
    await writeFile(headStartStatusFile, JSON.stringify({ state: 'started' }), { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function prepareAndRecord(run: DocRun): Promise<void> {
  let status: Status;
  try {
    await prepareCluster(run);
    status = { state: 'ready' };
  } catch (error) {
    status = { state: 'failed', message: (error as Error).message };
  }
  // Written aside and renamed over, so that a reader never sees half of it.
  await writeFile(`${headStartStatusFile}.next`, JSON.stringify(status));
  await rename(`${headStartStatusFile}.next`, headStartStatusFile);
}

async function readStatus(): Promise<Status | undefined> {
  try {
    return JSON.parse(await readFile(headStartStatusFile, 'utf8')) as Status;
  } catch {
    return undefined;
  }
}

async function checkStatus(): Promise<void> {
  const status = await readStatus();
  if (status?.state === 'failed') throw new Error(status.message);
  if (status?.state !== 'ready') throw new Error(`kind head start: ${JSON.stringify(status)}`);
}
