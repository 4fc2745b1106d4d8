// The RAM a model's booted devices use on this host, measured (ADR 0021): the running median of
// the last samples per platform and model (a median, so one device mid-test or just booted does
// not move it), kept in the data directory like the stage timings so a restarted agent starts
// from what it measured. The sampler reads the process table at most once per interval, and only
// while some virtual device is booted and settled (ready or leased: a booting one is still
// growing, a reclaiming one is going away).
import type { Platform } from '../api/index.js';
import type { Clock } from '../runtime/index.js';
import { deviceResidentMb, type ProcessRow } from './device-memory.js';
import type { PlannedDevice } from './planner.js';
import { median } from './stage-timings.js';

/** Kept per model; older samples fall off. */
const KEPT = 15;
/** A sample outside this is not a device's memory (a parse gone wrong, a process half gone). */
const MIN_SAMPLE_MB = 16;
const MAX_SAMPLE_MB = 262_144;
export const RAM_SAMPLE_INTERVAL_MS = 60_000;

export interface MeasuredModel {
  platform: Platform;
  model: string;
  /** The median of the kept samples, in MiB. */
  mb: number;
  samples: number;
}

/** `<platform>/<model>` → samples in MiB, oldest first. */
export type ModelRamRecord = Record<string, number[]>;

function keyOf(platform: Platform, model: string): string {
  return `${platform}/${model}`;
}

function validSample(mb: number): boolean {
  return Number.isFinite(mb) && mb >= MIN_SAMPLE_MB && mb <= MAX_SAMPLE_MB;
}

export class ModelRam {
  readonly #samples = new Map<string, number[]>();
  readonly #onChange: ((record: ModelRamRecord) => void) | undefined;

  /** `onChange` is told the whole record after each change (to keep it across restarts). */
  constructor(record: ModelRamRecord = {}, onChange?: (record: ModelRamRecord) => void) {
    this.#onChange = onChange;
    for (const [key, values] of Object.entries(record)) {
      // A model name as the config takes it (1–128 characters).
      if (!/^(ios|android)\/.{1,128}$/.test(key)) continue;
      const valid = values.filter(validSample).slice(-KEPT);
      if (valid.length > 0) this.#samples.set(key, valid);
    }
  }

  /** Adds one sample per model (several devices of a model: each is a sample). */
  record(samples: readonly { platform: Platform; model: string; mb: number }[]): void {
    let changed = false;
    for (const { platform, model, mb } of samples) {
      if (!validSample(mb) || model.length === 0 || model.length > 128) continue;
      const key = keyOf(platform, model);
      this.#samples.set(key, [...(this.#samples.get(key) ?? []), Math.round(mb)].slice(-KEPT));
      changed = true;
    }
    if (changed) this.#onChange?.(this.toRecord());
  }

  /** Every measured model with its median, the most sampled first. */
  measured(): MeasuredModel[] {
    return [...this.#samples]
      .map(([key, values]) => {
        const slash = key.indexOf('/');
        return {
          platform: key.slice(0, slash) as Platform,
          model: key.slice(slash + 1),
          mb: median(values),
          samples: values.length,
        };
      })
      .sort((a, b) => b.samples - a.samples || a.model.localeCompare(b.model));
  }

  toRecord(): ModelRamRecord {
    return Object.fromEntries(this.#samples);
  }
}

export interface DeviceRamSamplerOptions {
  clock: Clock;
  models: ModelRam;
  /** One read of the host's process table (`readProcessTable` over the agent's runner). */
  readProcesses: () => Promise<ProcessRow[]>;
  intervalMs?: number;
}

/** Samples the booted virtual devices' memory into `models`, at most once per interval. */
export class DeviceRamSampler {
  readonly #options: DeviceRamSamplerOptions;
  #lastAt: number | undefined;

  constructor(options: DeviceRamSamplerOptions) {
    this.#options = options;
  }

  /** Whether a new sample was taken (the medians may have moved). A failed read is thrown. */
  async sample(devices: readonly PlannedDevice[]): Promise<boolean> {
    const { clock, models, readProcesses } = this.#options;
    const interval = this.#options.intervalMs ?? RAM_SAMPLE_INTERVAL_MS;
    const booted = devices.filter(
      (device) => !device.physical && (device.state === 'ready' || device.state === 'leased'),
    );
    if (booted.length === 0) return false;
    if (this.#lastAt !== undefined && clock.now() - this.#lastAt < interval) return false;
    this.#lastAt = clock.now();
    const rows = await readProcesses();
    const samples = [];
    for (const device of booted) {
      const mb = deviceResidentMb(rows, device);
      if (mb !== undefined) samples.push({ platform: device.platform, model: device.model, mb });
    }
    models.record(samples);
    return samples.length > 0;
  }
}
