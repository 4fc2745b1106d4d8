// Pure view models of the console pages: what a row shows, computed from the wire objects and the
// contract in api/ (reason texts, platform names, device states). The pages only lay them out.
import {
  DeviceState,
  PLATFORM_NAMES,
  PLATFORMS,
  reasonText,
  type Device,
  type DeviceSpec,
  type GrantProgress,
  type Platform,
  type WorkerReason,
} from '../../api/index.js';
import type { Feed, LeaseView, RequestView, WorkerView } from './wire.js';

/** A worker as people know it: its label, else its name. */
export function workerTitle(worker: Pick<WorkerView, 'name' | 'label'>): string {
  return worker.label !== undefined && worker.label.length > 0 ? worker.label : worker.name;
}

/** "5s", "3m 02s", "2h 05m", "3d 4h": how long, for people. */
export function formatDuration(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/**
 * A quarantined device, in one line: since how long, why, and what comes next ("retry 2 in 4m
 * 10s", or that it waits for an operator once its retries are used up).
 */
export function quarantineText(quarantine: NonNullable<Device['quarantine']>, now: number): string {
  const since = `quarantined ${formatDuration(now - Date.parse(quarantine.since))}: ${quarantine.reason}`;
  if (quarantine.nextRetryAt !== undefined) {
    const wait = formatDuration(Date.parse(quarantine.nextRetryAt) - now);
    return `${since} · retry ${(quarantine.retries ?? 0) + 1} in ${wait}`;
  }
  if (quarantine.retries !== undefined) {
    return `${since} · ${quarantine.retries} ${quarantine.retries === 1 ? 'retry' : 'retries'} failed, waits for an operator`;
  }
  return since;
}

/** The time from `iso` to `now`; undefined for a missing or unreadable time. */
export function ageOf(iso: string | undefined, now: number): number | undefined {
  if (iso === undefined) return undefined;
  const at = Date.parse(iso);
  return Number.isNaN(at) ? undefined : Math.max(0, now - at);
}

/** What is left of a lease: "59m 58s", or "expired". */
export function expiresIn(expiresAt: string, now: number): string {
  const at = Date.parse(expiresAt);
  if (Number.isNaN(at)) return 'unknown';
  return at <= now ? 'expired' : formatDuration(at - now);
}

/** The page's event stream: opening, open, or lost (the browser opens it again). */
export type StreamState = 'connecting' | 'open' | 'reconnecting';

/**
 * What the header says of how current the page is. Live only when the stream is open and every
 * one of the console's watches has listed and none is failing: a page whose console cannot watch
 * the cluster shows what it last knew, and must not claim more.
 */
export function liveness(
  stream: StreamState,
  feed: Feed | undefined,
): { live: boolean; text: string } {
  if (stream === 'connecting') return { live: false, text: '○ Connecting…' };
  if (stream === 'reconnecting') return { live: false, text: '○ Reconnecting…' };
  const failing = feed?.failing.length ?? 0;
  if (failing > 0)
    return {
      live: false,
      text: `⚠ Not live: ${failing} ${failing === 1 ? 'watch fails' : 'watches fail'}`,
    };
  if (feed === undefined || feed.syncing.length > 0)
    return { live: false, text: '○ Not live yet: loading' };
  return { live: true, text: '● Live' };
}

export type Connection = 'connected' | 'late' | 'never';

/** A heartbeat renewed within its duration is connected; older is late; none is never. */
export function heartbeatState(worker: WorkerView, now: number): Connection {
  const age = ageOf(worker.heartbeat?.renewTime, now);
  if (age === undefined) return 'never';
  const durationMs = (worker.heartbeat?.durationSeconds ?? 40) * 1000;
  return age <= durationMs ? 'connected' : 'late';
}

/** Devices counted by state, in the contract's state order, states with none left out. */
export function devicesByState(
  devices: readonly Device[],
): { state: DeviceState; count: number }[] {
  const counts = new Map<DeviceState, number>();
  for (const device of devices) counts.set(device.state, (counts.get(device.state) ?? 0) + 1);
  return DeviceState.options
    .filter((state) => counts.has(state))
    .map((state) => ({ state, count: counts.get(state) ?? 0 }));
}

export interface PlatformSlots {
  platform: Platform;
  name: string;
  running: number;
  limit: number;
  atRamBudget: boolean;
}

/** Running/limit per platform the worker reports, in the contract's platform order. */
export function platformSlots(worker: WorkerView): PlatformSlots[] {
  const platforms = worker.capacity?.platforms ?? {};
  return PLATFORMS.flatMap((platform) => {
    const slots = platforms[platform];
    return slots
      ? [
          {
            platform,
            name: PLATFORM_NAMES[platform],
            running: slots.running,
            limit: slots.limit,
            atRamBudget: slots.atRamBudget,
          },
        ]
      : [];
  });
}

/** "iOS iPhone 16, OS 18.4, physical": what a request asks for. */
export function describeSpec(spec: DeviceSpec): string {
  const parts = [PLATFORM_NAMES[spec.platform]];
  if (spec.model) parts.push(spec.model);
  else if (spec.class) parts.push(spec.class);
  let text = parts.join(' ');
  if (spec.os) text += `, OS ${spec.os}`;
  if (spec.physical) text += ', physical';
  return text;
}

/**
 * "booting · about 25 s": the stage of making or booting the device a Dispatched request is at,
 * with its agent's estimate (the same words as the plugin's, runtime/grant-progress-text.ts,
 * which the page cannot import); undefined when there is none.
 */
export function stageSummary(progress: GrantProgress | undefined): string | undefined {
  if (progress === undefined) return undefined;
  const seconds = progress.estimatedSeconds;
  if (seconds === undefined) return progress.stage;
  const about = seconds < 120 ? `about ${seconds} s` : `about ${Math.round(seconds / 60)} min`;
  return `${progress.stage} · ${about}`;
}

export interface InspectorRow {
  /** The worker's raw name (the key). */
  worker: string;
  /** Its label when the console knows the worker, else its raw name. */
  title: string;
  text: string;
}

/** One row per worker of a waiting request, each with its reason's text from the contract. */
export function inspectorRows(
  reasons: readonly WorkerReason[],
  platform: Platform,
  workers: ReadonlyMap<string, Pick<WorkerView, 'name' | 'label'>>,
): InspectorRow[] {
  return reasons.map((entry) => {
    const known = workers.get(entry.worker);
    return {
      worker: entry.worker,
      title: known ? workerTitle(known) : entry.worker,
      text: reasonText(entry, platform),
    };
  });
}

const WAITING_PHASES = new Set(['Pending', 'Waiting', 'Dispatched', undefined]);

/** Requests still waiting, in queue order: position first, then when they were queued. */
export function waitingRequests(requests: Iterable<RequestView>): RequestView[] {
  return [...requests]
    .filter((request) => WAITING_PHASES.has(request.phase) && !request.deleting)
    .sort(
      (a, b) =>
        (a.position ?? Number.MAX_SAFE_INTEGER) - (b.position ?? Number.MAX_SAFE_INTEGER) ||
        (a.queuedAt ?? a.createdAt ?? '').localeCompare(b.queuedAt ?? b.createdAt ?? '') ||
        a.name.localeCompare(b.name),
    );
}

/** Requests that have an outcome: granted or failed, newest first. */
export function settledRequests(
  requests: Iterable<RequestView>,
  phase: 'Granted' | 'Failed',
): RequestView[] {
  return [...requests]
    .filter((request) => request.phase === phase)
    .sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
}

/** Granted leases, soonest to expire first. */
export function activeLeases(leases: Iterable<LeaseView>): LeaseView[] {
  return [...leases]
    .filter((lease) => lease.phase === 'Granted' && !lease.deleting)
    .sort((a, b) => a.expiresAt.localeCompare(b.expiresAt) || a.name.localeCompare(b.name));
}

// The screenshot command lives in the contract: the TypeScript client takes screenshots too.
export { screenshotCommand } from '../../api/index.js';
