// Kind clusters of runs that ended without their teardown (a run killed, a machine stopped) are
// swept at the start of the next kind tier: kind's node container restarts with Docker, so such a
// cluster came back with every dockerd start and ran beside every later suite (an idle kind node
// is about a fifth of two cores). Each run notes its owner, the vitest process that made it, in a
// file of its own; a run whose owner is gone goes, and so does one with no such note (made before
// runs noted owners) once it is over an hour old, longer than any kind tier takes. A live run of
// another clone sharing this Docker engine is left alone.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { CommandResult } from '../../test/cluster/harness.js';

/** Runs a command (kind, docker) with the kind tier's environment. */
export type Run = (command: string, args: string[]) => Promise<CommandResult>;

/** A run without an owner's note is taken for stale once this old. */
const UNOWNED_STALE_MS = 60 * 60 * 1000;
const RUN_NAME = /^\/?(simlock-e2e-[0-9a-f]{6})-/;

const ownersFolder = () =>
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'simlock', 'kind-runs');
const ownerFile = (name: string) => join(ownersFolder(), `${name}.json`);

interface Owner {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc): a reused pid is not the owner. */
  startTicks?: string;
}

function startTicksOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function alive({ pid, startTicks }: Owner): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: there, another user's.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return startTicks === undefined || startTicksOf(pid) === startTicks;
}

/** Notes this process as the owner of the run `name`. */
export async function noteOwner(name: string): Promise<void> {
  await mkdir(ownersFolder(), { recursive: true });
  const owner: Owner = { pid: process.pid, startTicks: startTicksOf(process.pid) };
  await writeFile(ownerFile(name), JSON.stringify(owner));
}

export const forgetOwner = (name: string) => rm(ownerFile(name), { force: true });

async function ownerOf(name: string): Promise<Owner | undefined> {
  try {
    return JSON.parse(await readFile(ownerFile(name), 'utf8')) as Owner;
  } catch {
    return undefined;
  }
}

/** The runs whose containers are on this Docker engine, with their newest container's age. */
async function runsOnEngine(run: Run, now: number): Promise<Map<string, number>> {
  const listed = await run('docker', ['ps', '--all', '--quiet', '--filter', 'name=simlock-e2e-']);
  const ids = listed.stdout.split('\n').filter(Boolean);
  const runs = new Map<string, number>();
  if (listed.exitCode !== 0 || ids.length === 0) return runs;
  const inspected = await run('docker', ['inspect', '--format', '{{.Name}} {{.Created}}', ...ids]);
  for (const line of inspected.stdout.split('\n')) {
    const [container = '', created = ''] = line.split(' ');
    const name = RUN_NAME.exec(container)?.[1];
    const age = now - Date.parse(created);
    if (name !== undefined && Number.isFinite(age))
      runs.set(name, Math.min(age, runs.get(name) ?? Infinity));
  }
  return runs;
}

/**
 * Deletes run `name`'s cluster, the containers named after it (docs/INSTALL.md's agents, when the
 * run stopped before its uninstall step), the network kind made for it, and its owner's note.
 */
export async function removeRun(run: Run, name: string): Promise<void> {
  await run('kind', ['delete', 'cluster', '--name', name]);
  const left = await run('docker', ['ps', '--all', '--quiet', '--filter', `name=${name}-`]);
  const ids = left.stdout.split('\n').filter(Boolean);
  if (ids.length > 0) await run('docker', ['rm', '--force', ...ids]);
  await run('docker', ['network', 'rm', `${name}-net`]);
  await forgetOwner(name);
}

/** Deletes the clusters, containers and networks of stale runs; answers the runs it removed. */
export async function sweepStaleRuns(run: Run, now = Date.now()): Promise<string[]> {
  const removed: string[] = [];
  for (const [name, ageMs] of await runsOnEngine(run, now)) {
    const owner = await ownerOf(name);
    const stale = owner ? !alive(owner) : ageMs > UNOWNED_STALE_MS;
    if (!stale) continue;
    await removeRun(run, name);
    removed.push(name);
  }
  return removed;
}
