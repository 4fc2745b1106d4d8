// The stage timings kept across restarts: a small JSON file in the agent's data directory, read at
// start (an unreadable one is a fresh start, said in the log) and written whole after each change
// (a temp file renamed over it, so a crash mid-write leaves the last whole file).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../runtime/index.js';
import type { StageTimingsRecord } from './stage-timings.js';

const TimingsFile = z.record(
  z.string().max(512),
  z.array(z.number().int().min(0).max(86_400_000)).max(64),
);

export function stageTimingsPath(dataDir: string): string {
  return join(dataDir, 'stage-timings.json');
}

export async function readStageTimings(path: string, log: Logger): Promise<StageTimingsRecord> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = TimingsFile.safeParse(JSON.parse(text.slice(0, 1_000_000)));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: below
  }
  log.warn('stage timings unreadable; estimates start from the defaults', { path });
  return {};
}

/** A writer that keeps the file current; writes never overlap, and a failed one is logged. */
export function stageTimingsWriter(
  path: string,
  log: Logger,
): (record: StageTimingsRecord) => void {
  let writing: Promise<void> = Promise.resolve();
  return (record) => {
    const text = JSON.stringify(record);
    writing = writing.then(async () => {
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(`${path}.next`, text);
        await rename(`${path}.next`, path);
      } catch (error) {
        log.warn('could not keep the stage timings', { path, error });
      }
    });
  };
}
