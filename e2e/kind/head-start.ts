// The kind tier's first step (kind create cluster, docker build, kind load docker-image) started
// while the cluster tier's last files still run: they leave a core mostly idle, and the step is a
// minute of waiting on kubeadm and docker. Started any earlier, the idle kind node would cost the
// cluster tier a fifth of the machine for minutes (measured: 19 % of two cores).
//
// Three places take part, all in the vitest process but the last: the kind global setup makes the
// cluster's KindRun and offers `headStart()` (on globalThis, which the reporter shares);
// HeadStartReporter calls it once few cluster files are left; the install test, in its worker,
// waits for the status file. Whoever creates the status file first (exclusively) does the work:
// when the reporter never fired (no cluster files in the run, another reporter asked for), the
// test does it itself.
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { eventually } from '../../test/cluster/harness.js';
import { IMAGE, must, repositoryRoot, type KindRun } from './kind.js';

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
export function offerHeadStart(kind: KindRun): { settled: () => Promise<void> } {
  let running: Promise<void> | undefined;
  const start = () => {
    running ??= claim()
      .then((mine) => {
        if (!mine) return;
        console.log('kind tier: head start begun (kind create cluster, docker build, kind load)');
        return prepareAndRecord(kind);
      })
      // The install test, waiting on the status file, says so at its deadline.
      .catch((error: unknown) => console.error(`kind head start: ${(error as Error).message}`));
  };
  const current = handle();
  current.start = start;
  if (current.wanted) start();
  return { settled: () => running ?? Promise.resolve() };
}

/** The three commands of the first step. */
export async function prepareCluster(kind: KindRun): Promise<void> {
  // At once: the node boots (mostly waiting on kubeadm) while the image builds.
  await Promise.all([kind.createCluster(), kind.buildImage()]);
  must(
    await kind.run('kind', ['load', 'docker-image', IMAGE, '--name', kind.name], {
      timeoutMs: 300_000,
    }),
    'kind load docker-image',
  );
}

/**
 * The install test's side: the cluster made by the head start, or made here when nobody started
 * it. Throws what failed.
 */
export async function clusterReady(kind: KindRun, timeoutMs: number): Promise<void> {
  if (await claim()) return prepareAndRecord(kind).then(() => checkStatus());
  // Unreadable (being written) counts as still under way.
  const settled = async () => {
    const state = (await readStatus())?.state;
    return state === undefined || state === 'started' ? undefined : true;
  };
  await eventually(settled, {
    timeoutMs,
    intervalMs: 500,
    what: 'the kind head start (create, build, load)',
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

async function prepareAndRecord(kind: KindRun): Promise<void> {
  let status: Status;
  try {
    await prepareCluster(kind);
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
