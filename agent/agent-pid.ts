// `<dataDir>/agent.pid`: the daemon writes its pid there at start and removes it on stop, so
// `simlock-agent doctor --fix` can refuse to repair a place a running agent is using. A file whose
// process no longer runs (the agent was killed) is stale: the doctor reports it.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processRuns } from './drivers/doctor-finding.js';

export const PID_FILE = 'agent.pid';

export type PidFileState =
  | { state: 'none' }
  | { state: 'running'; pid: number }
  /** The file is there but names no running process (or no pid at all). */
  | { state: 'stale'; text: string };

export function pidFilePath(dataDir: string): string {
  return join(dataDir, PID_FILE);
}

export async function writePidFile(dataDir: string, pid = process.pid): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  await writeFile(pidFilePath(dataDir), `${pid}\n`);
}

/** Removes the file if it still names `pid` (another agent may have started since). */
export async function removePidFile(dataDir: string, pid = process.pid): Promise<void> {
  const now = await readPidFile(dataDir);
  if (now.state === 'running' && now.pid === pid) await rm(pidFilePath(dataDir), { force: true });
}

export async function readPidFile(dataDir: string): Promise<PidFileState> {
  let text: string;
  try {
    text = (await readFile(pidFilePath(dataDir), 'utf8')).slice(0, 64).trim();
  } catch {
    return { state: 'none' };
  }
  const pid = Number(text);
  if (/^\d+$/.test(text) && pid > 0 && processRuns(pid)) return { state: 'running', pid };
  return { state: 'stale', text };
}
