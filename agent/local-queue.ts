// The agent's local queue: programs on the host (a developer's agent, a local CI runner) lease
// through the agent without the cluster. They wait in FIFO order and show one reason each in the
// view (DESIGN.md §7.1: "local-agent on wrk_b … — full: running limit for iOS").
//
// Fairness with fleet leases: while a local request waits for a simulator or emulator of a
// platform, a fleet Lease for that platform is refused NO_CAPACITY (the planner reads
// `waitingSpecs()`), so capacity that frees goes to the local one first; the controller's
// idle-queue stage already skips a worker whose queueDepth is above zero. A waiting local physical
// request holds only the devices it could take. Within the queue, requests wait in lines (one per
// platform for virtual requests, one per physical match): a request is tried only when every
// earlier request of its line has been served, and shows `busy` until then.
import {
  physicalClaimKey,
  SimlockError,
  type AgentQueueEntry,
  type DeviceSpec,
  type ErrorBody,
  type ReasonEntry,
} from '../api/index.js';
import type { Clock, TimerHandle } from '../runtime/index.js';
import type { GrantOutcome, LeaseRecord } from './granter.js';
import { Listeners } from './listeners.js';
import { waitingReasonFor } from './planner.js';

export interface LocalRequest {
  id: string;
  holder?: string;
  spec: DeviceSpec;
  /** Fail with NO_CAPACITY instead of waiting. */
  noWait?: boolean;
  /** Fail with TIMEOUT after waiting this long. */
  waitTimeoutMs?: number;
}

export type LocalOutcome =
  { kind: 'granted'; lease: LeaseRecord } | { kind: 'failed'; error: ErrorBody };

export interface LocalEntry {
  readonly request: LocalRequest;
  readonly queuedAtMs: number;
  reason: ReasonEntry;
  /** Settles once: granted, or failed (cannot serve, no-wait, timeout, cancelled). */
  readonly outcome: Promise<LocalOutcome>;
}

interface QueuedEntry extends LocalEntry {
  settle: (outcome: LocalOutcome) => void;
  timer?: TimerHandle;
}

/** How the queue asks for a grant: the granter's grant, as a local lease. */
export type LocalGrant = (request: LocalRequest) => Promise<GrantOutcome>;

export const MAX_VIEW_QUEUE_ENTRIES = 50;

function lineOf(spec: DeviceSpec): string {
  return spec.physical ? physicalClaimKey('local', spec) : `virtual/${spec.platform}`;
}

export class LocalQueue {
  /** Fires when entries or their reasons change. */
  readonly changes = new Listeners<void>();
  readonly #clock: Clock;
  readonly #maxEntries: number;
  #entries: QueuedEntry[] = [];
  #serving: Promise<void> | undefined;
  #serveAgain = false;

  constructor(options: { clock: Clock; maxEntries: number }) {
    this.#clock = options.clock;
    this.#maxEntries = options.maxEntries;
  }

  /** Adds a request at the back of the queue; serve() tries it. */
  enqueue(request: LocalRequest): LocalEntry {
    if (this.#entries.some((entry) => entry.request.id === request.id)) {
      throw new SimlockError('INVALID_REQUEST', `local request ${request.id} is already queued`);
    }
    if (this.#entries.length >= this.#maxEntries) {
      throw new SimlockError('NO_CAPACITY', `the local queue is full (${this.#maxEntries})`);
    }
    let settle!: (outcome: LocalOutcome) => void;
    const outcome = new Promise<LocalOutcome>((resolve) => (settle = resolve));
    const entry: QueuedEntry = {
      request,
      queuedAtMs: this.#clock.now(),
      reason: { reason: 'not-chosen' },
      outcome,
      settle,
    };
    if (request.waitTimeoutMs !== undefined) {
      entry.timer = this.#clock.setTimeout(
        () =>
          this.#fail(entry, {
            code: 'TIMEOUT',
            message: `waited ${request.waitTimeoutMs} ms without a device`,
          }),
        request.waitTimeoutMs,
      );
    }
    this.#entries.push(entry);
    this.changes.emit();
    return entry;
  }

  /** Withdraws a waiting request; false when it is not waiting. */
  cancel(id: string): boolean {
    const entry = this.#entries.find((candidate) => candidate.request.id === id);
    if (entry === undefined) return false;
    this.#fail(entry, { code: 'WITHDRAWN', message: 'withdrawn before it was granted' });
    return true;
  }

  entries(): readonly LocalEntry[] {
    return this.#entries;
  }

  /** The specs a fleet lease must not overtake: every waiting request. */
  waitingSpecs(): DeviceSpec[] {
    return this.#entries.map((entry) => entry.request.spec);
  }

  get queueDepth(): number {
    return this.#entries.filter((entry) => !entry.request.spec.physical).length;
  }

  get physicalQueueDepth(): number {
    return this.#entries.filter((entry) => entry.request.spec.physical === true).length;
  }

  /** The view's queue: the first entries, each with its one reason. */
  viewEntries(): AgentQueueEntry[] {
    return this.#entries.slice(0, MAX_VIEW_QUEUE_ENTRIES).map((entry) => {
      const view: AgentQueueEntry = {
        id: entry.request.id.slice(0, 253),
        platform: entry.request.spec.platform,
        queuedAt: new Date(entry.queuedAtMs).toISOString(),
        reason: entry.reason.reason,
      };
      if (entry.request.holder !== undefined) view.holder = entry.request.holder.slice(0, 100);
      if (entry.request.spec.model !== undefined) view.model = entry.request.spec.model;
      if (entry.request.spec.physical) view.physical = true;
      if (entry.reason.capacityReason !== undefined) {
        view.capacityReason = entry.reason.capacityReason;
      }
      return view;
    });
  }

  /**
   * Tries the waiting requests in order. Calls while a pass runs are folded into one more pass
   * after it, so every change (a release, a device plugged in) is followed by a pass.
   */
  serve(grant: LocalGrant): Promise<void> {
    if (this.#serving !== undefined) {
      this.#serveAgain = true;
      return this.#serving;
    }
    this.#serving = (async () => {
      do {
        this.#serveAgain = false;
        await this.#pass(grant);
      } while (this.#serveAgain);
    })().finally(() => {
      this.#serving = undefined;
    });
    return this.#serving;
  }

  async #pass(grant: LocalGrant): Promise<void> {
    const blockedLines = new Set<string>();
    for (const entry of [...this.#entries]) {
      if (!this.#entries.includes(entry)) continue; // timed out or cancelled meanwhile
      const line = lineOf(entry.request.spec);
      if (blockedLines.has(line)) {
        this.#setReason(entry, { reason: 'busy' });
        continue;
      }
      const outcome = await grant(entry.request);
      if (!this.#entries.includes(entry)) continue;
      if (outcome.kind === 'granted') {
        this.#settle(entry, { kind: 'granted', lease: outcome.lease });
        continue;
      }
      const { refusal } = outcome;
      if (refusal.code !== 'NO_CAPACITY' || entry.request.noWait) {
        this.#fail(entry, {
          code: refusal.code,
          message: refusal.message,
          ...(refusal.details ? { details: refusal.details } : {}),
        });
        continue;
      }
      this.#setReason(entry, waitingReasonFor(refusal, entry.request.spec));
      blockedLines.add(line);
    }
  }

  #setReason(entry: QueuedEntry, reason: ReasonEntry): void {
    if (
      entry.reason.reason === reason.reason &&
      entry.reason.capacityReason === reason.capacityReason
    ) {
      return;
    }
    entry.reason = reason;
    this.changes.emit();
  }

  #fail(entry: QueuedEntry, error: ErrorBody): void {
    this.#settle(entry, { kind: 'failed', error });
  }

  #settle(entry: QueuedEntry, outcome: LocalOutcome): void {
    if (!this.#entries.includes(entry)) return;
    this.#entries = this.#entries.filter((candidate) => candidate !== entry);
    if (entry.timer !== undefined) this.#clock.clearTimeout(entry.timer);
    entry.settle(outcome);
    this.changes.emit();
  }
}
