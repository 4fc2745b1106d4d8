// The request shell: turns what the controller sees into the request machine's events, and carries
// out the effects the machine answers (request-machine.ts decides; this file only does). Every
// timer and every retry of a request is its key in the request work queue: a timer is a moment in
// `request.timers`, a failed write is made again after the key's backoff, never dropped.
import { FORCE_RELEASE_ANNOTATION, LeaseRequestObject, REQUEST_FINALIZER } from '../api/index.js';
import {
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type WorkQueue,
} from '../runtime/index.js';
import type { AssumeCache } from './assume-cache.js';
import type { EventRecorder } from './event-recorder.js';
import type { FleetCache } from './fleet-cache.js';
import type { LeaseDispatcher } from './lease-dispatcher.js';
import type { ParsedLease } from './parsed-lease.js';
import { RequestWrites } from './request-writes.js';
import { endSilences, rememberAnswer, takenDevicesKey, type Answer } from './memos.js';
import type { ControllerMetrics } from './metrics.js';
import { next, type Effect, type RequestEvent } from './request-machine.js';
import { recoveryOf } from './device-recovery.js';
import type { RoutingPolicy } from '../api/index.js';
import type { StatusWriter } from './status-writer.js';
import {
  lifetimeOf,
  trackRequest,
  waitDeadline,
  type LifetimeLimits,
  type RequestRetry,
  type RequestTimer,
  type TrackedRequest,
} from './tracked-request.js';
import type { WriteQueue } from './write-queue.js';

export interface RequestShellOptions {
  client: KubeClient;
  writes: WriteQueue;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  policy: RoutingPolicy;
  fleet: FleetCache;
  assumptions: AssumeCache;
  leases: LeaseDispatcher;
  /** The request work queue; its reconcile is `reconcile` here. */
  queue: WorkQueue;
  /** The LeaseRequest object as our informer has it now. */
  lookup: (key: string) => KubeObject | undefined;
  walk: () => void;
  dispatchTimeoutMs: number;
  grantTimeoutMs: number;
  limits: LifetimeLimits;
}

export class RequestShell {
  readonly requests = new Map<string, TrackedRequest>();
  /** Set once by the reconciler: the writers need the shell's timers, and it needs them. */
  status!: StatusWriter;
  events!: EventRecorder;
  /** Requests came or went, or were queued: the queue must be sorted again. */
  onQueueChange: () => void = () => undefined;
  /** A request held granted is being deleted: its lease ends (usage-observer.ts). */
  onGrantedDeleting: (request: TrackedRequest) => void = () => undefined;

  private readonly requestWrites: RequestWrites;

  constructor(private readonly options: RequestShellOptions) {
    this.requestWrites = new RequestWrites(options, this);
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
        status,
      });
      // A holder's renewals count from our first sight (a restarted controller gives it one).
      if (spec.holderRenewSeconds !== undefined) request.holderRenewedAt = this.options.clock.now();
      this.requests.set(key, request);
      this.onQueueChange();
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
      const leaseExists = this.options.leases.watched(key) !== undefined;
      if (request.life.kind === 'granted') this.onGrantedDeleting(request);
      this.apply(request, { type: 'requestDeleting', leaseExists });
    } else if (changed) {
      this.apply(request, { type: 'requestChanged' });
    } else if (!tracked) {
      const lease = this.options.leases.watched(key);
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
    const request = this.requests.get(lease.key);
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
      if (request) this.apply(request, { type: 'leaseGone', uid: lease.uid });
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
    for (const effect of step.effects) this.carryOut(request, effect);
    if (step.life.kind !== previous.kind) this.syncAssumption(request);
  }

  private carryOut(request: TrackedRequest, effect: Effect): void {
    switch (effect.type) {
      case 'admit':
        return void this.requestWrites.admit(request);
      case 'createLease':
        return void this.requestWrites.createLease(request, effect.worker);
      case 'withdrawLease':
        return void this.requestWrites.withdrawLease(request);
      case 'deleteLease':
        return void this.requestWrites.deleteLease(request);
      case 'removeFinalizer':
        return void this.requestWrites.removeFinalizer(request);
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
        return this.status.change(request, effect.change);
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
        return void this.requestWrites.extendLease(
          request,
          effect.expiresAt,
          effect.durationSeconds,
        );
      case 'remember':
        return this.remember(
          request,
          effect.memo.kind === 'unanswered'
            ? {
                kind: 'unanswered',
                until: this.options.clock.now() + this.options.dispatchTimeoutMs,
              }
            : effect.memo,
        );
      case 'wakeAt':
        return this.setTimer(request, effect.timer, effect.at);
      case 'cancel':
        if (effect.timers === 'all') request.timers = {};
        else for (const timer of effect.timers) this.clearTimer(request, timer);
        return;
      case 'walk':
        return this.options.walk();
      case 'retryDispatch':
        return this.retry(request, 'dispatch', new Error('the Lease was not created'), () =>
          Promise.resolve(this.options.walk()),
        );
    }
  }

  /** What routing counts of this request on its worker (assume-cache.ts). */
  private syncAssumption(request: TrackedRequest): void {
    const { life, key, spec } = request;
    if (life.kind === 'creatingLease' || life.kind === 'dispatched')
      this.options.assumptions.assume(key, life.worker, spec);
    else if (life.kind === 'granted' && request.grantedAt !== undefined)
      this.options.assumptions.confirm(
        key,
        life.worker,
        spec,
        request.device?.id,
        request.grantedAt,
      );
    else this.options.assumptions.forget(key);
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
        return events.holdDispatch(request, `${request.worker ?? ''} (${stage}${physical})`);
      }
      default:
        return events.recordOutcome(request, event, status.label(request));
    }
  }

  /** A refusal, or a silence, held against the view revision the dispatch was routed on. */
  private remember(request: TrackedRequest, answer: Answer): void {
    const worker = request.worker ?? '';
    // For a dispatch this process did not route (adopted after a restart): the current revision.
    const { routedOn } = request;
    const viewRevision = routedOn?.revision ?? this.options.fleet.revision(worker) ?? 0;
    const counted = rememberAnswer(request, worker, answer, viewRevision, routedOn?.takenDevices);
    this.options.metrics.refusals.inc(counted);
    if (answer.kind === 'unanswered') {
      this.setTimer(request, 'silence', Math.min(answer.until, request.timers.silence ?? Infinity));
      this.options.log.warn('no answer from the worker', { request: request.key, worker });
    } else
      this.options.log.info('refused', { request: request.key, worker, refusal: answer.refusal });
  }

  // --- Timers and retries: the request's key in the work queue ---------------------------------

  setTimer(request: TrackedRequest, which: RequestTimer, at: number): void {
    request.timers[which] = at;
    this.options.queue.addAfter(request.key, at - this.options.clock.now());
  }

  clearTimer(request: TrackedRequest, which: RequestTimer): void {
    request.timers[which] = undefined;
  }

  /** A write that failed: made again after the request's backoff (which grows until it works). */
  retry(request: TrackedRequest, which: RequestRetry, error: unknown, write: () => Promise<void>) {
    request.retries.set(which, write);
    this.options.queue.requeueAfterFailure(request.key, error);
  }

  /** A write worked: once nothing else is retried, the request's backoff starts over. */
  succeeded(request: TrackedRequest): void {
    if (request.retries.size === 0) this.options.queue.forget(request.key);
  }

  /** The request's key came up: fire its timers that fell due, make its writes to retry. */
  reconcile(key: string): { requeueAfterMs: number } | undefined {
    const request = this.requests.get(key);
    if (!request) return undefined;
    const now = this.options.clock.now();
    const due = (Object.entries(request.timers) as [RequestTimer, number | undefined][])
      .filter((entry): entry is [RequestTimer, number] => entry[1] !== undefined && entry[1] <= now)
      .sort((a, b) => a[1] - b[1]);
    for (const [which, at] of due) {
      // An earlier timer's work may have cleared or moved this one.
      if (request.timers[which] !== at || this.requests.get(key) !== request) continue;
      request.timers[which] = undefined;
      if (which === 'write') this.status.flush(request);
      else if (which === 'dispatchEvent') this.events.recordHeld(request);
      else if (which === 'silence') this.endSilences(request, now);
      else this.apply(request, { type: 'timerDue', timer: which });
    }
    const retries = [...request.retries.values()];
    request.retries.clear();
    for (const write of retries) void write();
    const later = Object.values(request.timers).filter((at): at is number => at !== undefined);
    return later.length > 0 ? { requeueAfterMs: Math.max(1, Math.min(...later) - now) } : undefined;
  }

  /** Silences held as long as their workers had to answer end: those workers are asked again. */
  private endSilences(request: TrackedRequest, now: number): void {
    const { ended, nextAt } = endSilences(request.memos, now);
    if (nextAt !== undefined) this.setTimer(request, 'silence', nextAt);
    if (ended) this.options.walk();
  }

  private forget(request: TrackedRequest): void {
    request.timers = {};
    this.requests.delete(request.key);
    this.options.queue.remove(request.key);
    this.options.assumptions.forget(request.key);
    this.onQueueChange();
    this.options.walk();
  }
}
