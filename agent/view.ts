// The agent's view: the Worker status it reports (DESIGN.md §1), built from the inventory, the
// presence reads, the local queue and the health checks; and the differ that says when it changed
// (debounced), so the Kubernetes wiring patches the Worker only then.
import {
  canonicalJson,
  PROTOCOL,
  SIMLOCK_VERSION,
  viewKey,
  WorkerStatus,
  type AgentQueueEntry,
  type Catalog,
  type Device,
  type Health,
  type WorkerTunnel,
} from '../api/index.js';
import type { Clock, TimerHandle } from '../runtime/index.js';
import type { Limits } from './config.js';
import { Listeners } from './listeners.js';
import { measureCapacity, type PlannedDevice } from './planner.js';
import { onlyTaken } from './view-taken.js';

/** This agent's version, reported in the Worker status; keep it equal to package.json. */
export const AGENT_VERSION = SIMLOCK_VERSION;

const MAX_VIEW_DEVICES = 512;

export interface ViewSources {
  agentVersion?: string;
  endpoint?: string;
  health: Health;
  capabilities: readonly { name: string; available: boolean }[];
  /** Undefined until the drivers have been read: the view then has no catalog and no capacity. */
  catalog: Catalog | undefined;
  devices: readonly PlannedDevice[];
  limits: Limits;
  /** Where the limits come from, said in the view. */
  limitsBasis?: string;
  /** Free space where devices live. */
  disk?: { freeGiB: number; lowBelowGiB: number; low: boolean };
  /** The tunnel to the exec proxy, when the agent has one (ADR 0024). */
  tunnel?: WorkerTunnel | undefined;
  queue: {
    entries: readonly AgentQueueEntry[];
    queueDepth: number;
    physicalQueueDepth: number;
  };
}

function clip(text: string, length: number): string {
  return text.length <= length ? text : text.slice(0, length);
}

/**
 * A device as the view lists it. Shut-down simulators and emulators are not listed: they are in
 * the catalog (what can be booted) and counted nowhere; a listed `ready` virtual device is booted
 * and idle (warm), which is what the controller's warm-hit stage reads.
 */
function viewDevice(device: PlannedDevice): Device | undefined {
  if (device.state === 'shutdown' || device.state === 'deleting') return undefined;
  const entry: Device = {
    id: clip(device.id, 128),
    name: clip(device.name, 128),
    model: clip(device.model, 128),
    platform: device.platform,
    os: clip(device.os, 32),
    physical: device.physical,
    class: device.class,
    state: device.state,
  };
  if (device.physical && device.presence !== undefined) entry.presence = device.presence;
  const quarantine = device.quarantinedFor;
  if (quarantine !== undefined) {
    // Quarantined while a retry boots it too (the planner counts it booting: it takes a slot).
    entry.state = 'quarantined';
    entry.quarantine = {
      reason: clip(quarantine.reason, 256),
      since: new Date(quarantine.sinceMs).toISOString(),
      ...(quarantine.retries !== undefined ? { retries: quarantine.retries } : {}),
      ...(quarantine.nextRetryAtMs !== undefined
        ? { nextRetryAt: new Date(quarantine.nextRetryAtMs).toISOString() }
        : {}),
    };
  }
  return entry;
}

export function buildWorkerStatus(sources: ViewSources): WorkerStatus {
  const listed = sources.devices
    .map(viewDevice)
    .filter((device): device is Device => device !== undefined);
  const devices = listed
    // Physical devices first when there are too many: they are the ones routing matches by id.
    .sort((a, b) => Number(b.physical) - Number(a.physical) || a.id.localeCompare(b.id))
    .slice(0, MAX_VIEW_DEVICES)
    .sort((a, b) => a.id.localeCompare(b.id));
  const capacity =
    sources.catalog === undefined
      ? undefined
      : measureCapacity(sources.devices, sources.catalog.platforms, sources.limits);
  const status = {
    protocol: PROTOCOL.current,
    agentVersion: clip(sources.agentVersion ?? AGENT_VERSION, 64),
    health: sources.health,
    ...(sources.endpoint !== undefined ? { endpoint: sources.endpoint } : {}),
    capabilities: sources.capabilities.slice(0, 64).map((entry) => ({
      name: clip(entry.name, 63),
      available: entry.available,
    })),
    ...(sources.catalog !== undefined && capacity !== undefined
      ? {
          catalog: sources.catalog,
          capacity,
          slots: `${capacity.global.running}/${capacity.global.limit}`,
          ...(sources.limitsBasis !== undefined ? { limitsBasis: sources.limitsBasis } : {}),
          ...(sources.disk !== undefined ? { disk: sources.disk } : {}),
        }
      : {}),
    queueDepth: sources.queue.queueDepth,
    physicalQueueDepth: sources.queue.physicalQueueDepth,
    queue: sources.queue.entries.slice(0, 50),
    devices,
    deviceCount: Math.min(listed.length, 100_000),
    ...(sources.tunnel !== undefined ? { tunnel: sources.tunnel } : {}),
  };
  // The contract's own parse: a view that breaks it is a bug here, better found now than by the
  // API server.
  return WorkerStatus.parse(status);
}

/**
 * Health: `starting` until the drivers have been listed and checked once; then `running`, or
 * `unhealthy` while the latest health check or listing failed.
 */
export class HealthTracker {
  #listed = false;
  #checked = false;
  #listingFailure: string | undefined;
  #checkFailure: string | undefined;

  recordListing(failure?: string): void {
    if (failure === undefined) this.#listed = true;
    this.#listingFailure = failure;
  }

  recordCheck(failure?: string): void {
    this.#checked = true;
    this.#checkFailure = failure;
  }

  get health(): Health {
    if (this.#listingFailure !== undefined || this.#checkFailure !== undefined) {
      return this.#listed || this.#checked ? 'unhealthy' : 'starting';
    }
    return this.#listed && this.#checked ? 'running' : 'starting';
  }

  /** Why it is unhealthy, for logs. */
  get failure(): string | undefined {
    return this.#checkFailure ?? this.#listingFailure;
  }
}

export interface ViewChange {
  status: WorkerStatus;
  /** The api's view key: what routing reads; a refusal memo holds while it is unchanged. */
  viewKey: string;
}

/**
 * Emits the view when it changed, at most once per `debounceMs`. A change after a quiet window is
 * emitted at once (a device plugged back in, a slot freed: routing should know now); changes
 * within `debounceMs` of an emit are folded in, and at the window's end the latest view is
 * emitted if it differs (canonical JSON, so key order does not count) from the last one emitted.
 * A view that differs from the last one emitted only by devices taken (view-taken.ts: what the
 * controller counts of its own grants meanwhile) waits `takenDelayMs` from the first such change,
 * folding in what follows, unless something else changes first (ADR 0029); `prompt()` ends that
 * wait (a local grant, which the controller does not know).
 */
export class ViewDiffer {
  readonly changes = new Listeners<ViewChange>();
  readonly #clock: Clock;
  readonly #debounceMs: number;
  readonly #takenDelayMs: number;
  #latest: WorkerStatus | undefined;
  #emittedJson: string | undefined;
  #emitted: WorkerStatus | undefined;
  #timer: TimerHandle | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #emittedAt = Number.NEGATIVE_INFINITY;
  /** Since when the views offered differ from the emitted one only by devices taken. */
  #takenSince: number | undefined;

  constructor(options: { clock: Clock; debounceMs: number; takenDelayMs?: number }) {
    this.#clock = options.clock;
    this.#debounceMs = options.debounceMs;
    this.#takenDelayMs = options.takenDelayMs ?? 0;
  }

  /** The last view emitted. */
  get emitted(): WorkerStatus | undefined {
    return this.#emitted;
  }

  offer(status: WorkerStatus): void {
    this.#latest = status;
    if (this.#timer === undefined && canonicalJson(status) === this.#emittedJson) return;
    const now = this.#clock.now();
    let due = this.#emittedAt + this.#debounceMs;
    if (this.#takenDelayMs > 0 && this.#emitted !== undefined && onlyTaken(this.#emitted, status)) {
      this.#takenSince ??= now;
      due = Math.max(due, this.#takenSince + this.#takenDelayMs);
    } else this.#takenSince = undefined;
    this.#schedule(due, now);
  }

  /** Ends a wait for devices taken: the view is emitted as any other change is. */
  prompt(): void {
    if (this.#takenSince === undefined) return;
    this.#takenSince = undefined;
    this.#schedule(this.#emittedAt + this.#debounceMs, this.#clock.now());
  }

  /** Emits now if the latest view differs from the last emitted. */
  flush(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#takenSince = undefined;
    const status = this.#latest;
    if (status === undefined) return;
    const json = canonicalJson(status);
    if (json === this.#emittedJson) return;
    this.#emittedJson = json;
    this.#emitted = status;
    this.#emittedAt = this.#clock.now();
    this.changes.emit({ status, viewKey: viewKey(status) });
  }

  stop(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  /** Emits at `due`, now if it has passed; a wait set for another time is moved to it. */
  #schedule(due: number, now: number): void {
    if (due <= now) return this.flush();
    if (this.#timer !== undefined) {
      if (this.#timerAt === due) return;
      this.#clock.clearTimeout(this.#timer);
    }
    this.#timerAt = due;
    this.#timer = this.#clock.setTimeout(() => this.flush(), due - now);
  }
}
