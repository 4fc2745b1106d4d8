// The measured RAM per model kept across restarts, as the stage timings are: a small JSON file in
// the agent's data directory, read at start (an unreadable one is a fresh start, said in the log)
// and written whole after each change (a temp file renamed over it).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../runtime/index.js';
import type { ModelRamRecord } from './model-ram.js';

const ModelRamFile = z.record(
  z.string().max(256),
  z.array(z.number().int().min(0).max(4_194_304)).max(64),
);

export function modelRamPath(dataDir: string): string {
  return join(dataDir, 'model-ram.json');
}

export async function readModelRam(path: string, log: Logger): Promise<ModelRamRecord> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = ModelRamFile.safeParse(JSON.parse(text.slice(0, 1_000_000)));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: below
  }
  log.warn('measured RAM per model unreadable; it is measured again', { path });
  return {};
}

/** A writer that keeps the file current; writes never overlap, and a failed one is logged. */
export function modelRamWriter(path: string, log: Logger): (record: ModelRamRecord) => void {
  let writing: Promise<void> = Promise.resolve();
  return (record) => {
    const text = JSON.stringify(record);
    writing = writing.then(async () => {
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(`${path}.next`, text);
        await rename(`${path}.next`, path);
      } catch (error) {
        log.warn('could not keep the measured RAM per model', { path, error });
      }
    });
  };
}
