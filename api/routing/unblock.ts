// What would unblock a waiting request (issue 37, ADR 0026): each candidate change builds changed
// worker views and asks the same stages, through `select`, whether a worker is picked then. Only a
// change after which one is picked is offered; the cheapest first (UNBLOCK_KINDS), at most three.
// Pure, on demand: never part of the controller's walk.
import type { DeviceSpec } from '../lease-request-schema.js';
import { compareOsVersions, osMatches, parseOsSpec } from '../match.js';
import { giveSlot, hasRoom } from '../slots.js';
import {
  MAX_UNBLOCK_CHANGES,
  UNBLOCK_KINDS,
  type UnblockChange,
  type UnblockVerdict,
} from '../unblock.js';
import type { WorkerStatus } from '../worker-schema.js';
import { createPipeline } from './pipeline.js';
import { STAGES } from './policy.js';
import type { Stage, WorkerView } from './types.js';

/** A lease held on a worker, as the asker could read it. */
export interface HeldLease {
  readonly namespace: string;
  readonly name: string;
  readonly worker: string;
  /** ISO time. */
  readonly endsAt: string;
  readonly platform: DeviceSpec['platform'];
  readonly device?: string | undefined;
}

export interface UnblockQuestion {
  readonly request: DeviceSpec;
  readonly views: readonly WorkerView[];
  readonly leases?: readonly HeldLease[];
  readonly stages?: readonly Stage[];
}

/** The views with one change made: a new view object for the worker it names, the rest as is. */
export function applyUnblockChange(
  views: readonly WorkerView[],
  change: UnblockChange,
): WorkerView[] {
  return views.map((view) => (view.name === change.worker ? changedView(view, change) : view));
}

function changedView(view: WorkerView, change: UnblockChange): WorkerView {
  const status = view.status;
  switch (change.kind) {
    case 'undrain':
      return { ...view, drained: false };
    case 'install-runtime': {
      if (status?.catalog === undefined) return view;
      const runtimes = [
        ...status.catalog.runtimes,
        { platform: change.platform, version: change.version },
      ];
      return { ...view, status: { ...status, catalog: { ...status.catalog, runtimes } } };
    }
    case 'raise-limit': {
      const capacity = status?.capacity;
      const platform = capacity?.platforms[change.platform];
      if (status === undefined || capacity === undefined || platform === undefined) return view;
      const raised = <T extends { limit: number; running: number }>(slots: T, raise: boolean): T =>
        raise ? { ...slots, limit: Math.max(slots.limit, slots.running) + 1 } : slots;
      return {
        ...view,
        status: {
          ...status,
          capacity: {
            global: raised(capacity.global, change.globalLimit !== undefined),
            platforms: {
              ...capacity.platforms,
              [change.platform]: raised(platform, change.platformLimit !== undefined),
            },
          },
        },
      };
    }
    case 'lease-ends':
      return status === undefined ? view : { ...view, status: leaseEnded(status, change) };
  }
}

/**
 * The view once a lease has ended and its device is reclaimed: a physical device is ready again;
 * a simulator's slot is idle again (evictable), so a cold boot has room.
 */
function leaseEnded(
  status: WorkerStatus,
  change: Extract<UnblockChange, { kind: 'lease-ends' }>,
): WorkerStatus {
  const device = status.devices.find((candidate) => candidate.id === change.device);
  if (device?.physical === true) {
    const devices = status.devices.map((candidate) =>
      candidate === device ? { ...candidate, state: 'ready' as const } : candidate,
    );
    return { ...status, devices };
  }
  const capacity = status.capacity;
  const platform = capacity?.platforms[change.platform];
  if (capacity === undefined || platform === undefined) return status;
  return {
    ...status,
    capacity: {
      global: giveSlot(capacity.global),
      platforms: { ...capacity.platforms, [change.platform]: giveSlot(platform) },
    },
  };
}

/** The runtime version to suggest for the request's OS: one the fleet has, else a bound of the spec. */
function runtimeToInstall(request: DeviceSpec, views: readonly WorkerView[]): string | undefined {
  const os = request.os;
  if (os === undefined) return undefined;
  const inFleet = views
    .flatMap((view) => view.status?.catalog?.runtimes ?? [])
    .filter((runtime) => runtime.platform === request.platform && osMatches(os, runtime.version))
    .map((runtime) => runtime.version)
    .sort(compareOsVersions);
  // The newest the fleet already runs: a version known to exist.
  if (inFleet.length > 0) return inFleet[inFleet.length - 1];
  const constraint = parseOsSpec(os);
  if (constraint === undefined) return undefined;
  if (constraint.kind === 'exact') return constraint.text.trim();
  // A range: the lowest of its own bounds that satisfies it (">=18 <19" suggests 18).
  return constraint.comparisons
    .map((comparison) => comparison.version.join('.'))
    .filter((version) => osMatches(os, version))
    .sort(compareOsVersions)[0];
}

/** Every change worth trying for one worker, cheapest kind first. */
function candidates(
  view: WorkerView,
  request: DeviceSpec,
  leases: readonly HeldLease[],
  runtime: string | undefined,
): UnblockChange[] {
  const found: UnblockChange[] = [];
  const worker = view.name;
  for (const lease of leases) {
    if (lease.worker !== worker) continue;
    found.push({ kind: 'lease-ends', worker, ...leaseFields(lease) });
  }
  if (view.drained) found.push({ kind: 'undrain', worker });
  const catalog = view.status?.catalog;
  if (runtime !== undefined && catalog !== undefined && request.physical !== true) {
    found.push({ kind: 'install-runtime', worker, platform: request.platform, version: runtime });
  }
  const capacity = view.status?.capacity;
  const platform = capacity?.platforms[request.platform];
  if (capacity !== undefined && platform !== undefined && request.physical !== true) {
    const platformFull = !hasRoom(platform);
    const globalFull = !hasRoom(capacity.global);
    if (platformFull || globalFull) {
      found.push({
        kind: 'raise-limit',
        worker,
        platform: request.platform,
        ...(platformFull
          ? { platformLimit: { running: platform.running, limit: platform.limit } }
          : {}),
        ...(globalFull
          ? { globalLimit: { running: capacity.global.running, limit: capacity.global.limit } }
          : {}),
      });
    }
  }
  return found;
}

function leaseFields(lease: HeldLease) {
  return {
    lease: { namespace: lease.namespace, name: lease.name },
    endsAt: lease.endsAt,
    platform: lease.platform,
    ...(lease.device !== undefined ? { device: lease.device } : {}),
  };
}

function cost(change: UnblockChange): [number, number, string] {
  return [
    UNBLOCK_KINDS.indexOf(change.kind),
    change.kind === 'lease-ends' ? Date.parse(change.endsAt) : 0,
    change.worker,
  ];
}

function cheaperFirst(a: UnblockChange, b: UnblockChange): number {
  const [left, right] = [cost(a), cost(b)];
  return (
    left[0] - right[0] ||
    left[1] - right[1] ||
    (left[2] < right[2] ? -1 : left[2] > right[2] ? 1 : 0)
  );
}

/**
 * The few smallest changes that would let the request be routed: routable already, up to three
 * changes (each alone enough), cheapest first, or nothing helps.
 */
export function findUnblocks(question: UnblockQuestion): UnblockVerdict {
  const { request, views } = question;
  const select = createPipeline(question.stages ?? STAGES).select;
  const now = select(request, views);
  if (now !== undefined) return { kind: 'routable', worker: now.worker };
  const leases = [...(question.leases ?? [])].sort(
    (a, b) => Date.parse(a.endsAt) - Date.parse(b.endsAt),
  );
  const runtime = runtimeToInstall(request, views);
  const helping: UnblockChange[] = [];
  for (const view of views) {
    // One change per kind and worker: the earliest lease that helps, not every lease after it.
    const kinds = new Set<string>();
    for (const change of candidates(view, request, leases, runtime)) {
      if (kinds.has(change.kind)) continue;
      if (select(request, applyUnblockChange(views, change)) === undefined) continue;
      kinds.add(change.kind);
      helping.push(change);
    }
  }
  helping.sort(cheaperFirst);
  if (helping.length === 0) return { kind: 'nothing-helps' };
  return { kind: 'changes', changes: helping.slice(0, MAX_UNBLOCK_CHANGES) };
}
