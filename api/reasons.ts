// The reasons a waiting request gives for each worker, and their texts (DESIGN.md §3.2). Machine codes
// first; the texts are for people and are read from here by the CLI and any console.
import { z } from 'zod';

export const PLATFORMS = ['ios', 'android'] as const;
export const Platform = z.enum(PLATFORMS);
export type Platform = z.infer<typeof Platform>;

/** How a platform is written for people. */
export const PLATFORM_NAMES: Record<Platform, string> = { ios: 'iOS', android: 'Android' };

export const WAITING_REASONS = [
  'disconnected',
  'incompatible',
  'drained',
  'not-ready',
  'capability-missing',
  'no-driver',
  'unknown-model',
  'runtime-missing',
  'unhealthy',
  'busy',
  'full',
  'no-free-physical',
  'not-chosen',
] as const;
export const WaitingReason = z.enum(WAITING_REASONS);
export type WaitingReason = z.infer<typeof WaitingReason>;

/** Why a worker is full; carried only with the reason `full`. */
export const CAPACITY_REASONS = [
  'platform-running-limit',
  'global-running-limit',
  'ram-budget',
  'device-not-present',
  'disk-low',
] as const;
export const CapacityReason = z.enum(CAPACITY_REASONS);
export type CapacityReason = z.infer<typeof CapacityReason>;

const REASON_TEXTS: Record<WaitingReason, (platform: Platform) => string> = {
  disconnected: () => 'Not connected',
  incompatible: () => 'Protocol mismatch',
  drained: () => 'Drained',
  'not-ready': () => 'Not ready',
  'capability-missing': () => 'Missing a required capability',
  'no-driver': (platform) => `No driver for ${PLATFORM_NAMES[platform]}`,
  'unknown-model': () => 'Model not offered',
  'runtime-missing': () => 'OS not installed',
  unhealthy: () => 'Unhealthy',
  busy: () => 'Busy with its own queue',
  full: () => 'Full',
  'no-free-physical': () => 'Every matching device is leased or absent',
  'not-chosen': () => 'Not chosen this time',
};

const CAPACITY_TEXTS: Record<CapacityReason, (platform: Platform) => string> = {
  'platform-running-limit': (platform) => `Full: running limit for ${PLATFORM_NAMES[platform]}`,
  'global-running-limit': () => 'Full: running limit',
  'ram-budget': () => 'Full: RAM budget',
  'device-not-present': () => 'Full: matching device not present',
  'disk-low': () => 'Full: disk space low',
};

/** One worker's reason, as `status.workers` carries it (grouped or not) and an agent's queue entries. */
export interface ReasonEntry {
  reason: WaitingReason;
  capacityReason?: CapacityReason | undefined;
}

/** The text people read for a reason; `full` with a capacity reason reads that reason's text. */
export function reasonText(entry: ReasonEntry, platform: Platform): string {
  if (entry.reason === 'full' && entry.capacityReason !== undefined) {
    return CAPACITY_TEXTS[entry.capacityReason](platform);
  }
  return REASON_TEXTS[entry.reason](platform);
}

/** The CLI's form: only the first letter lower-cased ("OS not installed" → "oS not installed"). */
export function reasonLine(entry: ReasonEntry, platform: Platform): string {
  const text = reasonText(entry, platform);
  return text.charAt(0).toLowerCase() + text.slice(1);
}
