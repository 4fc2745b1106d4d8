// The stage timings kept across restarts: `<dataDir>/stage-timings.json` (samples-file.ts).
import { join } from 'node:path';
import type { Logger } from '../runtime/index.js';
import { readSamples, samplesWriter, type SamplesFileShape } from './samples-file.js';
import type { StageTimingsRecord } from './stage-timings.js';

const TIMINGS_FILE: SamplesFileShape = {
  maxKeyLength: 512,
  maxSample: 86_400_000,
  unreadable: 'stage timings unreadable; estimates start from the defaults',
  unwritable: 'could not keep the stage timings',
};

export function stageTimingsPath(dataDir: string): string {
  return join(dataDir, 'stage-timings.json');
}

export function readStageTimings(path: string, log: Logger): Promise<StageTimingsRecord> {
  return readSamples(path, TIMINGS_FILE, log);
}

/** A writer that keeps the file current; writes never overlap, and a failed one is logged. */
export function stageTimingsWriter(
  path: string,
  log: Logger,
): (record: StageTimingsRecord) => void {
  return samplesWriter(path, TIMINGS_FILE, log);
}
