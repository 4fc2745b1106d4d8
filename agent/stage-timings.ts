// How long the slow steps of a grant take on this host: making a device and booting one, per
// platform, model and OS. The estimate a grant reports is the running median of the last few
// measured (a median, so one boot after a reboot of the Mac does not move it), or a default per
// platform before the first measurement, said as such. The figures are kept in a small JSON file
// in the agent's data directory, so a restarted agent starts from what it measured before.
import type { GrantStage, Platform } from '../api/index.js';

export interface StageSubject {
  platform: Platform;
  model: string;
  os: string;
}

export interface StageEstimate {
  /** Absent: no basis (never the case today: a default stands in). */
  ms?: number;
  /** What the estimate is made from, for a person: "median of 5 on this host", "default". */
  basis: string;
}

/** Kept per key; older measurements fall off. */
const KEPT = 9;

/**
 * Defaults before anything is measured: `simctl create` takes a second or two; an Android AVD is
 * written in a few seconds; a first boot of a new simulator takes about half a minute and an
 * emulator's cold boot about a minute (figures reported for current Macs and x86_64/arm64 hosts
 * with hardware acceleration; the first measurement replaces them).
 */
export const DEFAULT_STAGE_MS: Record<GrantStage, Record<Platform, number>> = {
  provisioning: { ios: 3_000, android: 8_000 },
  booting: { ios: 30_000, android: 60_000 },
};

export type StageTimingsRecord = Record<string, number[]>;

function keyOf(stage: GrantStage, subject: StageSubject): string {
  return `${stage}/${subject.platform}/${subject.model.toLowerCase()}/${subject.os}`;
}

/** The middle value (the mean of the two middle ones for an even count), rounded. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? sorted[middle]!
    : Math.round((sorted[middle - 1]! + sorted[middle]!) / 2);
}

export class StageTimings {
  readonly #samples = new Map<string, number[]>();
  readonly #onChange: ((record: StageTimingsRecord) => void) | undefined;

  /** `onChange` is told the whole record after each measurement (to keep it across restarts). */
  constructor(record: StageTimingsRecord = {}, onChange?: (record: StageTimingsRecord) => void) {
    this.#onChange = onChange;
    for (const [key, values] of Object.entries(record)) {
      const valid = values.filter((value) => Number.isFinite(value) && value >= 0).slice(-KEPT);
      if (valid.length > 0) this.#samples.set(key, valid);
    }
  }

  estimate(stage: GrantStage, subject: StageSubject): StageEstimate {
    const samples = this.#samples.get(keyOf(stage, subject));
    if (samples === undefined || samples.length === 0) {
      return { ms: DEFAULT_STAGE_MS[stage][subject.platform], basis: 'default' };
    }
    const basis =
      samples.length === 1
        ? 'the last one on this host'
        : `median of ${samples.length} on this host`;
    return { ms: median(samples), basis };
  }

  record(stage: GrantStage, subject: StageSubject, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    const key = keyOf(stage, subject);
    const samples = [...(this.#samples.get(key) ?? []), Math.round(ms)].slice(-KEPT);
    this.#samples.set(key, samples);
    this.#onChange?.(this.toRecord());
  }

  /** What to keep across restarts. */
  toRecord(): StageTimingsRecord {
    return Object.fromEntries(this.#samples);
  }
}
