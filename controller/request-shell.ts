// The request shell: turns what the controller sees into the request machine's events, and carries
// out the effects the machine answers (request-machine.ts decides; this file only does): the
// request's writes (request-writes.ts), whose answers it applies, its status (status-writer.ts), its
// Events (event-recorder.ts) and its timers (request-timers.ts), all built before it. Every timer
// and every retry of a request is its key in the request work queue; `reconcile` is that key's wake.
import { FORCE_RELEASE_ANNOTATION, LeaseRequestObject, REQUEST_FINALIZER } from '../api/index.js';
import type { Clock, KubeObject } from '../runtime/index.js';
import type { AssumeCache } from './assume-cache.js';
import type { EventRecorder } from './event-recorder.js';
import type { ParsedLease } from './parsed-lease.js';
import { RequestWrites, type RequestWritesOptions } from './request-writes.js';
import { endSilences, rememberAnswer, takenDevicesKey, type Answer } from './memos.js';
import type { ControllerMetrics } from './metrics.js';
import {
  grantedAtOf,
  next,
  workerOf,
  type Effect,
  type RequestEvent,
  type RequestLife,
} from './request-machine.js';
import { recoveryOf } from './device-recovery.js';
import type { RequestTimers } from './request-timers.js';
import type { StatusWriter } from './status-writer.js';
import {
  lifetimeOf,
  trackRequest,
  waitDeadline,
  type LifetimeLimits,
  type TrackedRequest,
} from './tracked-request.js';

export interface RequestShellOptions extends RequestWritesOptions {
  clock: Clock;
  metrics: ControllerMetrics;
  assumptions: AssumeCache;
  /** Every request this process tracks, by key (the status writer writes only these). */
  requests: Map<string, TrackedRequest>;
  status: StatusWriter;
  events: EventRecorder;
  walk: () => void;
  /** Requests came or went, or were queued: the queue must be sorted again. */
  queueChanged: () => void;
  /** A request held granted is being deleted: its lease ends (usage-observer.ts). */
  grantedDeleting: (request: TrackedRequest) => void;
  dispatchTimeoutMs: number;
  grantTimeoutMs: number;
  limits: LifetimeLimits;
}

export class RequestShell {
  readonly requests: Map<string, TrackedRequest>;
  private readonly requestWrites: RequestWrites;
  private readonly timers: RequestTimers;
  private readonly status: StatusWriter;
  private readonly events: EventRecorder;

  constructor(private readonly options: RequestShellOptions) {
    this.requests = options.requests;
    this.timers = options.timers;
    this.status = options.status;
    this.events = options.events;
    this.requestWrites = new RequestWrites(options);
  }

  // --- What the controller sees -----------------------------------------------------------------

  onRequest(object: KubeObject, deleted: boolean): void {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const tracked = this.requests.get(key);
    if (deleted) {
      if (tracked) this.forget(tracked);
      return;
    }
    const parsed = LeaseRequestObject.safeParse(object);
    if (!parsed.success) {
      this.options.log.warn('lease request unreadable', {
        request: key,
        issues: parsed.error.issues.slice(0, 3),
      });
      return;
    }
    const { metadata, spec, status } = parsed.data;
    let request = tracked;
    if (!request) {
      request = trackRequest({
        key,
        namespace: metadata.namespace ?? 'default',
        name: metadata.name,
        uid: metadata.uid ?? '',
        spec,
        createdAt: Date.parse(String(metadata.creationTimestamp ?? '')) || this.options.clock.now(),
        seenAt: this.options.clock.now(),
        status,
      });
      // A holder's renewals count from our first sight (a restarted controller gives it one).
      if (spec.holderRenewSeconds !== undefined) request.holderRenewedAt = this.options.clock.now();
      this.requests.set(key, request);
      this.options.queueChanged();
    }
    const forceReleasedBy = metadata.annotations?.[FORCE_RELEASE_ANNOTATION];
    const changed =
      tracked !== undefined &&
      (spec.durationSeconds !== tracked.spec.durationSeconds ||
        forceReleasedBy !== tracked.forceReleasedBy);
    request.spec = spec;
    request.forceReleasedBy = forceReleasedBy;
    request.hasFinalizer = (metadata.finalizers ?? []).includes(REQUEST_FINALIZER);
    request.generation = metadata.generation;
    if (metadata.deletionTimestamp !== undefined) {
      // A create in flight may make a Lease yet: its delete waits for it (request-writes.ts).
      const leaseExists =
        this.options.leases.watched(request) !== undefined || request.leaseCreate !== undefined;
      if (request.life.kind === 'granted') this.options.grantedDeleting(request);
      this.apply(request, { type: 'requestDeleting', leaseExists });
    } else if (changed) {
      this.apply(request, { type: 'requestChanged' });
    } else if (!tracked) {
      const lease = this.options.leases.toTakeUp(request, status?.worker);
      this.apply(request, {
        type: 'requestSeen',
        phase: status?.phase ?? 'Pending',
        worker: status?.worker,
        progress: status?.progress,
        recovery: recoveryOf(status),
        ...(lease ? { lease } : {}),
      });
    }
  }

  onLease(lease: ParsedLease, deleted: boolean): void {
    if (lease.requestKey === undefined) return;
    const tracked = this.requests.get(lease.requestKey);
    // A Lease of an earlier request of the same name (deleted, its device still being reclaimed)
    // is not this one's: only its going frees what it held.
    const request = tracked?.uid === lease.requestUid ? tracked : undefined;
    if (deleted) {
      // A granted Lease gone for good: its agent reclaimed the device (it removed its finalizer).
      if (lease.worker && lease.deviceId && this.options.fleet.has(lease.worker)) {
        this.options.assumptions.assumeReleased(
          lease.worker,
          { deviceId: lease.deviceId, physical: lease.physical },
          this.options.clock.now(),
        );
        this.options.walk();
      }
      if (request) {
        this.apply(request, { type: 'leaseGone', uid: lease.uid });
        this.syncAssumption(request);
      } else if (tracked) this.syncAssumption(tracked);
      else this.options.assumptions.forget(lease.requestKey);
      return;
    }
    // The requests informer may not have delivered it yet (start-up); its first sight looks again.
    if (request) this.apply(request, { type: 'leaseSeen', lease });
  }

  /** A holder session (coordination.k8s.io Lease) was renewed: seen now, by our clock. */
  holderRenewed(namespace: string, session: string): void {
    for (const request of this.requests.values()) {
      if (request.namespace !== namespace || request.spec.holderSession !== session) continue;
      request.holderRenewedAt = this.options.clock.now();
      this.apply(request, { type: 'holderRenewed' });
    }
  }

  workerGone(worker: string): void {
    for (const request of this.requests.values()) {
      const life = request.life;
      if ((life.kind === 'creatingLease' || life.kind === 'dispatched') && life.worker === worker)
        this.apply(request, { type: 'workerGone', worker });
    }
  }

  // --- The machine ------------------------------------------------------------------------------

  apply(request: TrackedRequest, event: RequestEvent): void {
    if (this.requests.get(request.key) !== request) return;
    const previous = request.life;
    const step = next(previous, event, {
      now: this.options.clock.now(),
      waitDeadline: waitDeadline(request),
      dispatchTimeoutMs: this.options.dispatchTimeoutMs,
      grantTimeoutMs: this.options.grantTimeoutMs,
      lifetime: lifetimeOf(request, this.options.limits),
    });
    request.life = step.life;
    // The life the status showed before each change: the one before the step, until the step's
    // first change shows its own.
    let shown = previous;
    for (const effect of step.effects) {
      this.carryOut(request, effect, shown);
      if (effect.type === 'writeStatus') shown = step.life;
    }
    if (step.life.kind !== previous.kind) this.syncAssumption(request);
    if (this.requests.get(request.key) === request) this.requestWrites.sweepStrayLeases(request);
  }

  private carryOut(request: TrackedRequest, effect: Effect, shown: RequestLife): void {
    switch (effect.type) {
      case 'admit':
        return this.answer(request, this.requestWrites.admit(request));
      case 'createLease':
        return this.answer(request, this.requestWrites.createLease(request, effect.worker));
      case 'withdrawLease':
        return this.answer(request, this.requestWrites.withdrawLease(request));
      case 'deleteLease':
        return this.answer(request, this.requestWrites.deleteLease(request));
      case 'removeFinalizer':
        return this.answer(request, this.requestWrites.removeFinalizer(request));
      case 'writeStatus':
        if (effect.change.kind === 'dispatched') {
          const { worker } = effect.change;
          request.routedOn = {
            revision: this.options.fleet.revision(worker),
            takenDevices: takenDevicesKey(this.options.fleet.view(worker), request.spec),
          };
        }
        // Routed by an earlier process, on a view this one may never have seen.
        if (effect.change.kind === 'adopted') request.routedOn = undefined;
        return this.status.change(request, effect.change, shown);
      case 'recordEvent':
        return this.recordEvent(request, effect.event);
      case 'recordProgress':
        return this.events.recordProgress(request, effect.progress, this.status.label(request));
      case 'recordRecovery':
        return effect.step === 'recovering'
          ? this.events.recordRecovering(request, effect.recovery)
          : this.events.recordRecovered(request, effect.cause);
      case 'recordLifetimeEvent':
        return this.events.record(
          request,
          effect.warning === true ? 'Warning' : 'Normal',
          effect.reason,
          effect.message,
        );
      case 'extendLease':
        return this.answer(
          request,
          this.requestWrites.extendLease(request, effect.expiresAt, effect.durationSeconds),
        );
      case 'remember':
        return this.remember(
          request,
          effect.worker,
          effect.memo.kind === 'unanswered'
            ? {
                kind: 'unanswered',
                until: this.options.clock.now() + this.options.dispatchTimeoutMs,
              }
            : effect.memo,
        );
      case 'wakeAt':
        return this.timers.set(request, effect.timer, effect.at);
      case 'cancel':
        if (effect.timers === 'all') this.timers.clearAll(request);
        else for (const timer of effect.timers) this.timers.clear(request, timer);
        return;
      case 'walk':
        return this.options.walk();
      case 'retryDispatch':
        return this.timers.retry(
          request,
          'dispatch',
          new Error('the Lease was not created'),
          () => {
            this.options.walk();
            return Promise.resolve(undefined);
          },
        );
    }
  }

  /** A write's answer, applied to the machine when it comes (none: nothing to tell). */
  private answer(request: TrackedRequest, write: Promise<RequestEvent | undefined>): void {
    void write.then((event) => {
      if (event) this.apply(request, event);
    });
  }

  /** What routing counts of this request on its worker (assume-cache.ts). */
  private syncAssumption(request: TrackedRequest): void {
    const { life, key, spec } = request;
    const grantedAt = grantedAtOf(life);
    if (life.kind === 'creatingLease' || life.kind === 'dispatched')
      this.options.assumptions.assume(key, life.worker, spec);
    else if (life.kind === 'granted' && grantedAt !== undefined)
      this.options.assumptions.confirm(key, life.worker, spec, request.device?.id, grantedAt);
    else if (!this.reclaimPending(request)) this.options.assumptions.forget(key);
  }

  /**
   * Released or ended, its Lease not gone yet: the agent still holds the device (it reclaims it
   * first), so it counts taken until the Lease goes (onLease). Forgotten at the release, a request
   * dispatched there at once was refused, and the refusal held for good: a device taken and given
   * back within the agent's wait leaves its view as it was (ADR 0029), so the view never moved.
   */
  private reclaimPending(request: TrackedRequest): boolean {
    const { kind } = request.life;
    return (
      (kind === 'releasing' || kind === 'ended') &&
      this.options.leases.watched(request) !== undefined
    );
  }

  private recordEvent(
    request: TrackedRequest,
    event: 'dispatched' | 'acknowledged' | 'granted' | 'failed' | 'released',
  ) {
    const { events, status } = this;
    switch (event) {
      case 'acknowledged':
        return events.recordHeld(request);
      case 'dispatched': {
        const stage = request.stage ?? '';
        this.options.metrics.dispatches.inc({ stage });
        status.flush(request);
        const physical = request.spec.physical === true ? ', physical' : '';
        const worker = workerOf(request.life) ?? '';
        return events.holdDispatch(request, `${worker} (${stage}${physical})`);
      }
      default:
        return events.recordOutcome(request, event, status.label(request));
    }
  }

  /** A refusal, or a silence, held against the view revision the dispatch was routed on. */
  private remember(request: TrackedRequest, worker: string, answer: Answer): void {
    // For a dispatch this process did not route (adopted after a restart): the current revision.
    const { routedOn } = request;
    const viewRevision = routedOn?.revision ?? this.options.fleet.revision(worker) ?? 0;
    const counted = rememberAnswer(request, worker, answer, viewRevision, routedOn?.takenDevices);
    this.options.metrics.refusals.inc(counted);
    if (answer.kind === 'unanswered') {
      const at = Math.min(answer.until, request.timers.silence ?? Infinity);
      this.timers.set(request, 'silence', at);
      this.options.log.warn('no answer from the worker', { request: request.key, worker });
    } else
      this.options.log.info('refused', { request: request.key, worker, refusal: answer.refusal });
  }

  // --- The request's key in the work queue ---------------------------------------------------

  /** The request's key came up: fire its timers that fell due, make its writes to retry. */
  reconcile(key: string): { requeueAfterMs: number } | undefined {
    const request = this.requests.get(key);
    if (!request) return undefined;
    const now = this.options.clock.now();
    for (const [which, at] of this.timers.due(request, now)) {
      // An earlier timer's work may have cleared or moved this one.
      if (request.timers[which] !== at || this.requests.get(key) !== request) continue;
      this.timers.clear(request, which);
      if (which === 'write') this.status.flush(request);
      else if (which === 'dispatchEvent') this.events.recordHeld(request);
      else if (which === 'silence') this.endSilences(request, now);
      else this.apply(request, { type: 'timerDue', timer: which });
    }
    for (const write of this.timers.takeRetries(request)) this.answer(request, write());
    return this.timers.nextWake(request, now);
  }

  /** Silences held as long as their workers had to answer end: those workers are asked again. */
  private endSilences(request: TrackedRequest, now: number): void {
    const { ended, nextAt } = endSilences(request.memos, now);
    if (nextAt !== undefined) this.timers.set(request, 'silence', nextAt);
    if (ended) this.options.walk();
  }

  private forget(request: TrackedRequest): void {
    this.timers.forget(request);
    this.requests.delete(request.key);
    if (this.options.leases.watched(request) === undefined)
      this.options.assumptions.forget(request.key);
    this.options.queueChanged();
    this.options.walk();
  }
}
