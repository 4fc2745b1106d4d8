// The measured RAM per model kept across restarts, as the stage timings are:
// `<dataDir>/model-ram.json` (samples-file.ts).
import { join } from 'node:path';
import type { Logger } from '../runtime/index.js';
import type { ModelRamRecord } from './model-ram.js';
import { readSamples, samplesWriter, type SamplesFileShape } from './samples-file.js';

const MODEL_RAM_FILE: SamplesFileShape = {
  maxKeyLength: 256,
  maxSample: 4_194_304,
  unreadable: 'measured RAM per model unreadable; it is measured again',
  unwritable: 'could not keep the measured RAM per model',
};

export function modelRamPath(dataDir: string): string {
  return join(dataDir, 'model-ram.json');
}

export function readModelRam(path: string, log: Logger): Promise<ModelRamRecord> {
  return readSamples(path, MODEL_RAM_FILE, log);
}

/** A writer that keeps the file current; writes never overlap, and a failed one is logged. */
export function modelRamWriter(path: string, log: Logger): (record: ModelRamRecord) => void {
  return samplesWriter(path, MODEL_RAM_FILE, log);
}
