// The event recorder: Kubernetes Events on a request, in order. A dispatch's Event is held until
// its agent answers or the dispatch times out (ADR 0005, 0016): a grant is then recorded as one
// Event; an acknowledgement (a cold boot begun), a refusal or the timeout records the held one
// first, with the time of the dispatch. Each stage of making or booting the device (Provisioning,
// Booting, with the agent's estimate) is an Event of its own, as is each start and end of a granted
// device's recovery after a crash (DeviceRecovering, DeviceRecovered). Events are bookkeeping: one that cannot be written is logged, not retried (as
// client-go's event broadcaster drops what it cannot send), and never holds a request back.
// At volume a plain grant (dispatched and granted, nothing told between) has an Event only while
// the grant Events' budget lasts, as client-go's spam filter has it for repeats on one object: the
// rest are told by the request's status (its Granted condition), and the next grant Event written
// in the namespace counts them (ADR 0028).
import {
  API_VERSION,
  DEVICE_RECOVERY_EVENTS,
  LIFETIME_REASONS,
  RESOURCES,
  type DeviceRecovery,
  type GrantProgress,
} from '../api/index.js';
import {
  askedDevice,
  estimateText,
  eventsPath,
  recoveredText,
  recoveringText,
  stageText,
  type Clock,
  type KubeClient,
  type Logger,
  type TokenBucket,
} from '../runtime/index.js';
import { describeGrant } from './status-writer.js';
import type { RequestTimers } from './request-timers.js';
import type { TrackedRequest } from './tracked-request.js';
import type { WriteQueue } from './write-queue.js';

export interface EventRecorderOptions {
  /** A client of its own when given a rate limit (kube-scheduler's event client does the same). */
  client: KubeClient;
  writes: WriteQueue;
  clock: Clock;
  log: Logger;
  /** Name of this controller in Events. */
  identity: string;
  /** How long a dispatch's Event is held at most (the dispatch timeout); 0 records it at once. */
  holdMs: number;
  /** The held dispatch Event's `dispatchEvent` timer. */
  timers: RequestTimers;
  /**
   * Plain grants' Events at most at this rate (a token each; none waited for): past it such a
   * grant is told by the request's status alone. Undefined: every grant its Event.
   */
  grantEvents?: TokenBucket | undefined;
  /** A plain grant's Event was left out (the budget was spent). */
  grantEventLeftOut?: () => void;
  /** A dispatch's Event is held until `until` at most: its status is held with it (ADR 0030). */
  dispatchHeld?: (request: TrackedRequest, until: number) => void;
  /** A held dispatch's Event was written: its status may be too. */
  dispatchTold?: (request: TrackedRequest) => void;
}

const LIFETIME_RELEASES = new Set<string>([
  LIFETIME_REASONS.holderGone,
  LIFETIME_REASONS.idle,
  LIFETIME_REASONS.forceReleased,
]);

export class EventRecorder {
  /** Grant Events left out, by namespace, since when: told by the next grant Event there. */
  private readonly leftOut = new Map<string, { count: number; since: number }>();

  constructor(private readonly options: EventRecorderOptions) {}

  record(
    request: TrackedRequest,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    at = this.options.clock.now(),
  ) {
    // History in order: a dispatch still held is recorded before what came of it.
    if (request.dispatchEvent !== undefined) this.recordHeld(request);
    const now = new Date(at).toISOString();
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${request.name}.`, namespace: request.namespace },
      involvedObject: {
        apiVersion: API_VERSION,
        kind: RESOURCES.leaseRequest.kind,
        name: request.name,
        namespace: request.namespace,
        uid: request.uid,
      },
      reason,
      message: message.slice(0, 1024),
      type,
      source: { component: 'simlock-controller' },
      reportingComponent: 'simlock.dev/controller',
      reportingInstance: this.options.identity,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    this.options.writes
      .run('bookkeeping', () => this.options.client.create(eventsPath(request.namespace), event))
      .catch((error: unknown) =>
        this.options.log.warn('could not record an event', {
          request: request.key,
          reason,
          error,
        }),
      );
  }

  /** The Event of a request's outcome; a grant tells the dispatch still held (ADR 0005). */
  recordOutcome(request: TrackedRequest, outcome: 'granted' | 'failed' | 'released', on: string) {
    switch (outcome) {
      case 'granted': {
        const dispatchedTo = this.takeHeld(request);
        // A dispatch told already (a cold boot, a refusal before) keeps its grant's Event: the
        // story in the Events ends with it. A plain grant past the budget is told by its status.
        if (dispatchedTo !== undefined && this.options.grantEvents?.tryTake() === false)
          return this.leaveOut(request);
        const dispatch = dispatchedTo ? `; dispatched to ${dispatchedTo}` : '';
        const what = `${describeGrant(request)} on ${on}`;
        const message = `Granted ${what}${dispatch}${this.leftOutNote(request.namespace)}`;
        return this.record(request, 'Normal', 'Granted', message);
      }
      case 'failed': {
        const { code = '', message = '' } = request.error ?? {};
        return this.record(request, 'Warning', 'Failed', `${code}: ${message}`);
      }
      case 'released': {
        // A lifetime rule's release is an Event of its own reason (HolderGone, Idle, ForceReleased).
        const reason = LIFETIME_RELEASES.has(request.releasedReason ?? '')
          ? (request.releasedReason ?? 'Released')
          : 'Released';
        return this.record(
          request,
          reason === 'Released' ? 'Normal' : 'Warning',
          reason,
          `Released: ${request.releasedBecause ?? ''}`,
        );
      }
    }
  }

  /**
   * A stage of making or booting the device, as its agent reported it: `Provisioning iPhone 16 on
   * worker-a, about 40 s` (reason Provisioning or Booting), after the dispatch still held.
   */
  recordProgress(request: TrackedRequest, progress: GrantProgress, on: string): void {
    const text = stageText(progress, { device: askedDevice(request.spec, progress), worker: on });
    const estimate = estimateText(progress);
    const reason = capitalized(progress.stage);
    const message = `${capitalized(text)}${estimate !== undefined ? `, ${estimate}` : ''}`;
    this.record(request, 'Normal', reason, message);
  }

  /**
   * The granted device crashed and its agent boots it again under the lease: `Device iPhone 17
   * (…) crashed (shut down): booting it again, back in about 40 s` (reason DeviceRecovering).
   */
  recordRecovering(request: TrackedRequest, recovery: DeviceRecovery): void {
    const message = capitalized(recoveringText(recovery, request.device));
    this.record(request, 'Warning', DEVICE_RECOVERY_EVENTS.recovering, message);
  }

  /** The device is back under the lease: `Device iPhone 17 (…) is back after its crash (…)`. */
  recordRecovered(request: TrackedRequest, cause: string | undefined): void {
    const message = capitalized(recoveredText(request.device, cause));
    this.record(request, 'Normal', DEVICE_RECOVERY_EVENTS.recovered, message);
  }

  /** A plain grant's Event left out: counted for the next grant Event of its namespace. */
  private leaveOut(request: TrackedRequest): void {
    const known = this.leftOut.get(request.namespace);
    if (known) known.count += 1;
    else this.leftOut.set(request.namespace, { count: 1, since: this.options.clock.now() });
    this.options.grantEventLeftOut?.();
  }

  /** `(57 grants here since … have no Event of their own: …)`, once, or nothing. */
  private leftOutNote(namespace: string): string {
    const known = this.leftOut.get(namespace);
    if (!known) return '';
    this.leftOut.delete(namespace);
    const grants = known.count === 1 ? '1 grant' : `${known.count} grants`;
    const since = new Date(known.since).toISOString();
    return ` (${grants} in this namespace since ${since} have no Event of their own: at volume a grant is told by its request's status)`;
  }

  /** Holds `Dispatched to <dispatchedTo>` (or records it now, with no hold). */
  holdDispatch(request: TrackedRequest, dispatchedTo: string): void {
    this.recordHeld(request);
    request.dispatchEvent = { to: dispatchedTo, at: this.options.clock.now() };
    if (this.options.holdMs <= 0) {
      this.recordHeld(request);
      return;
    }
    const until = this.options.clock.now() + this.options.holdMs;
    this.options.timers.set(request, 'dispatchEvent', until);
    this.options.dispatchHeld?.(request, until);
  }

  /** Writes the held dispatch Event, if any, dated when the dispatch was made. */
  recordHeld(request: TrackedRequest): void {
    const held = request.dispatchEvent;
    if (this.takeHeld(request) === undefined || !held) return;
    this.record(request, 'Normal', 'Dispatched', `Dispatched to ${held.to}`, held.at);
    this.options.dispatchTold?.(request);
  }

  /** The held dispatch, taken out to be told in the Event that follows it (the grant's). */
  takeHeld(request: TrackedRequest): string | undefined {
    const held = request.dispatchEvent;
    request.dispatchEvent = undefined;
    this.options.timers.clear(request, 'dispatchEvent');
    return held?.to;
  }
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
