// Samples kept across restarts (the stage timings, the RAM measured per model): a small JSON file
// in the agent's data directory mapping a key to its latest samples, read at start (an unreadable
// one is a fresh start, said in the log) and written whole after each change (a temp file renamed
// over it, so a crash mid-write leaves the last whole file).
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Logger } from '../runtime/index.js';

export type SamplesRecord = Record<string, number[]>;

export interface SamplesFileShape {
  /** The longest key kept. */
  maxKeyLength: number;
  /** The largest sample kept. */
  maxSample: number;
  /** What the log says when the file is unreadable, and when a write failed. */
  unreadable: string;
  unwritable: string;
}

function samplesSchema(shape: SamplesFileShape) {
  return z.record(
    z.string().max(shape.maxKeyLength),
    z.array(z.number().int().min(0).max(shape.maxSample)).max(64),
  );
}

export async function readSamples(
  path: string,
  shape: SamplesFileShape,
  log: Logger,
): Promise<SamplesRecord> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = samplesSchema(shape).safeParse(JSON.parse(text.slice(0, 1_000_000)));
    if (parsed.success) return parsed.data;
  } catch {
    // not JSON: below
  }
  log.warn(shape.unreadable, { path });
  return {};
}

/** A writer that keeps the file current; writes never overlap, and a failed one is logged. */
export function samplesWriter(
  path: string,
  shape: SamplesFileShape,
  log: Logger,
): (record: SamplesRecord) => void {
  let writing: Promise<void> = Promise.resolve();
  return (record) => {
    const text = JSON.stringify(record);
    writing = writing.then(async () => {
      try {
        await mkdir(dirname(path), { recursive: true });
        await writeFile(`${path}.next`, text);
        await rename(`${path}.next`, path);
      } catch (error) {
        log.warn(shape.unwritable, { path, error });
      }
    });
  };
}
