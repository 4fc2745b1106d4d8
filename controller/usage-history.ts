// The last day of usage in 5-minute buckets, kept by the leader for the console's Usage page (pure;
// ADR 0027): the wait of each granted request by its class (platform and model), and the device
// time leased and available per model. Bounded: a day of buckets, at most USAGE_MAX_CLASSES
// classes and models a bucket (more are counted as `other`). The same observations as the
// Prometheus metrics (usage-observer.ts), so a team without Prometheus sees the same figures.
import {
  USAGE_BUCKET_SECONDS,
  USAGE_MAX_CLASSES,
  USAGE_OTHER_MODEL,
  USAGE_WINDOW_SECONDS,
  WAIT_BOUNDS_SECONDS,
  waitCell,
  type UsageBucket,
  type UsageDevices,
  type UsageHistoryDocument,
  type UsageWaits,
} from '../api/index.js';

const BUCKET_MS = USAGE_BUCKET_SECONDS * 1000;

interface Bucket {
  start: number;
  waits: Map<string, UsageWaits>;
  devices: Map<string, UsageDevices>;
}

export class UsageHistory {
  private readonly buckets = new Map<number, Bucket>();
  private since: number;

  constructor(now: number) {
    this.since = now;
  }

  /**
   * Takes up a history an earlier leader published (its buckets still within the day), so a
   * failover or a restart loses only the minutes since its last write.
   */
  adopt(document: UsageHistoryDocument, now: number): void {
    const since = Date.parse(document.since);
    if (!Number.isNaN(since) && since < this.since) this.since = since;
    for (const bucket of document.buckets) {
      const target = this.bucket(bucket.start * 1000, now);
      if (!target) continue;
      for (const wait of bucket.waits)
        mergeWaits(this.waitsOf(target, wait.platform, wait.model), wait);
      for (const device of bucket.devices) {
        const into = this.devicesOf(target, device.model);
        into.leasedSeconds += device.leasedSeconds;
        into.availableSeconds += device.availableSeconds;
      }
    }
  }

  /** A request of `platform`/`model` was granted at `at` after waiting `seconds`. */
  wait(at: number, platform: string, model: string, seconds: number, now = at): void {
    const bucket = this.bucket(at, now);
    if (!bucket || !Number.isFinite(seconds) || seconds < 0) return;
    const waits = this.waitsOf(bucket, platform, model);
    const cell = waitCell(seconds);
    waits.cells[cell] = (waits.cells[cell] ?? 0) + 1;
    waits.minSeconds = waits.count === 0 ? seconds : Math.min(waits.minSeconds, seconds);
    waits.maxSeconds = Math.max(waits.maxSeconds, seconds);
    waits.count += 1;
    waits.totalSeconds += seconds;
  }

  /**
   * Devices of `model` were leased `leasedSeconds` and available `availableSeconds` from `from` to
   * `to` (at counts that did not change in between): the time is spread over the buckets the span
   * crosses, each getting its share.
   */
  deviceTime(
    from: number,
    to: number,
    model: string,
    leasedSeconds: number,
    availableSeconds: number,
  ): void {
    const span = to - from;
    if (!(span > 0)) return;
    for (let start = from; start < to;) {
      const end = Math.min(to, (Math.floor(start / BUCKET_MS) + 1) * BUCKET_MS);
      const bucket = this.bucket(start, to);
      if (bucket) {
        const share = (end - start) / span;
        const devices = this.devicesOf(bucket, model);
        devices.leasedSeconds += leasedSeconds * share;
        devices.availableSeconds += availableSeconds * share;
      }
      start = end;
    }
  }

  /** The day up to `now`, oldest bucket first; older buckets are dropped. */
  document(now: number): UsageHistoryDocument {
    this.prune(now);
    const buckets: UsageBucket[] = [...this.buckets.values()]
      .sort((a, b) => a.start - b.start)
      .map((bucket) => ({
        start: bucket.start / 1000,
        waits: [...bucket.waits.values()].filter((waits) => waits.count > 0).map(rounded),
        devices: [...bucket.devices.values()].map((devices) => ({
          model: devices.model,
          leasedSeconds: round(devices.leasedSeconds),
          availableSeconds: round(devices.availableSeconds),
        })),
      }));
    return {
      version: 1,
      bucketSeconds: USAGE_BUCKET_SECONDS,
      updatedAt: new Date(now).toISOString(),
      since: new Date(Math.max(this.since, now - USAGE_WINDOW_SECONDS * 1000)).toISOString(),
      buckets,
    };
  }

  /** The bucket of `at`; none when `at` is older than the day before `now`. */
  private bucket(at: number, now: number): Bucket | undefined {
    const start = Math.floor(at / BUCKET_MS) * BUCKET_MS;
    if (start + BUCKET_MS <= now - USAGE_WINDOW_SECONDS * 1000) return undefined;
    let bucket = this.buckets.get(start);
    if (!bucket) {
      bucket = { start, waits: new Map(), devices: new Map() };
      this.buckets.set(start, bucket);
      this.prune(now);
    }
    return bucket;
  }

  private prune(now: number): void {
    const oldest = now - USAGE_WINDOW_SECONDS * 1000;
    for (const start of this.buckets.keys())
      if (start + BUCKET_MS <= oldest) this.buckets.delete(start);
  }

  private waitsOf(bucket: Bucket, platform: string, model: string): UsageWaits {
    let key = `${platform}\n${model}`;
    if (!bucket.waits.has(key) && bucket.waits.size >= USAGE_MAX_CLASSES) {
      model = USAGE_OTHER_MODEL;
      key = `${platform}\n${model}`;
    }
    let waits = bucket.waits.get(key);
    if (!waits) {
      waits = {
        platform,
        model,
        count: 0,
        totalSeconds: 0,
        minSeconds: 0,
        maxSeconds: 0,
        cells: WAIT_BOUNDS_SECONDS.map(() => 0).concat(0),
      };
      bucket.waits.set(key, waits);
    }
    return waits;
  }

  private devicesOf(bucket: Bucket, model: string): UsageDevices {
    if (!bucket.devices.has(model) && bucket.devices.size >= USAGE_MAX_CLASSES)
      model = USAGE_OTHER_MODEL;
    let devices = bucket.devices.get(model);
    if (!devices) {
      devices = { model, leasedSeconds: 0, availableSeconds: 0 };
      bucket.devices.set(model, devices);
    }
    return devices;
  }
}

function mergeWaits(into: UsageWaits, from: UsageWaits): void {
  into.minSeconds = into.count === 0 ? from.minSeconds : Math.min(into.minSeconds, from.minSeconds);
  into.maxSeconds = Math.max(into.maxSeconds, from.maxSeconds);
  into.count += from.count;
  into.totalSeconds += from.totalSeconds;
  from.cells.forEach((count, cell) => (into.cells[cell] = (into.cells[cell] ?? 0) + count));
}

const round = (value: number) => Math.round(value * 1000) / 1000;

function rounded(waits: UsageWaits): UsageWaits {
  return {
    ...waits,
    totalSeconds: round(waits.totalSeconds),
    minSeconds: round(waits.minSeconds),
    maxSeconds: round(waits.maxSeconds),
    cells: [...waits.cells],
  };
}
