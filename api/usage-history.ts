// The controller's usage history as it publishes it (ADR 0027): the last day in 5-minute buckets,
// each with the waits of the requests granted in it per device class (platform and model), as a
// histogram with their count, total, shortest and longest, and the device time leased and
// available per model. Written by the leader into the ConfigMap `simlock-usage` of the system
// namespace, at most once a minute; the console reads it with the person's own credentials and
// parses it with this schema. Bounded: at most a day of buckets, each with at most
// USAGE_MAX_CLASSES classes and models (the rest are counted as `other`).
import { z } from 'zod';

/** The ConfigMap in the system namespace, and its key. */
export const USAGE_CONFIGMAP = 'simlock-usage';
export const USAGE_DATA_KEY = 'usage.json';
export const USAGE_BUCKET_SECONDS = 300;
export const USAGE_WINDOW_SECONDS = 86_400;
export const USAGE_MAX_BUCKETS = USAGE_WINDOW_SECONDS / USAGE_BUCKET_SECONDS;
export const USAGE_MAX_CLASSES = 32;
/** The most the published JSON may take: a ConfigMap holds at most 1 MiB. */
export const USAGE_MAX_BYTES = 900_000;
/** The model of a class past the bound; also the request metrics' `other`. */
export const USAGE_OTHER_MODEL = 'other';

/**
 * The upper bounds (seconds) of the wait histogram's cells; one more cell holds the waits past
 * the last bound. Each cell also has the class's shortest and longest wait of the bucket, so a
 * quantile read from it stays within what was seen.
 */
export const WAIT_BOUNDS_SECONDS = [
  1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400,
] as const;

const seconds = z.number().min(0).max(1e9);

export const UsageWaits = z.object({
  platform: z.string().max(63),
  /** The model the requests named as the fleet spells it, `any`, or `other`. */
  model: z.string().max(253),
  count: z.number().int().min(1),
  totalSeconds: seconds,
  minSeconds: seconds,
  maxSeconds: seconds,
  /** How many waits fell in each cell of WAIT_BOUNDS_SECONDS (and past it). */
  cells: z.array(z.number().int().min(0)).length(WAIT_BOUNDS_SECONDS.length + 1),
});
export type UsageWaits = z.infer<typeof UsageWaits>;

export const UsageDevices = z.object({
  model: z.string().max(253),
  /** Device-seconds leased, and available (booting, ready, leased or reclaiming on a connected worker). */
  leasedSeconds: seconds,
  availableSeconds: seconds,
});
export type UsageDevices = z.infer<typeof UsageDevices>;

export const UsageBucket = z.object({
  /** Its start, in seconds since the epoch, a multiple of USAGE_BUCKET_SECONDS. */
  start: z.number().int().min(0),
  waits: z.array(UsageWaits).max(USAGE_MAX_CLASSES + 1),
  devices: z.array(UsageDevices).max(USAGE_MAX_CLASSES + 1),
});
export type UsageBucket = z.infer<typeof UsageBucket>;

export const UsageHistoryDocument = z.object({
  version: z.literal(1),
  bucketSeconds: z.literal(USAGE_BUCKET_SECONDS),
  /** When the controller wrote it (ISO 8601). */
  updatedAt: z.string().max(40),
  /** Since when this history was kept without a gap (a controller that could not read it back starts anew). */
  since: z.string().max(40),
  buckets: z.array(UsageBucket).max(USAGE_MAX_BUCKETS + 1),
});
export type UsageHistoryDocument = z.infer<typeof UsageHistoryDocument>;

/** The cell of WAIT_BOUNDS_SECONDS a wait falls in. */
export function waitCell(waitSeconds: number): number {
  const index = WAIT_BOUNDS_SECONDS.findIndex((bound) => waitSeconds <= bound);
  return index === -1 ? WAIT_BOUNDS_SECONDS.length : index;
}
