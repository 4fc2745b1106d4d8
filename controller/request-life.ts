// A request's life: the states, events and effects of the request machine (request-machine.ts),
// and TRANSITIONS, the table docs/ARCHITECTURE.md draws. Types, the table, and what a request's
// status shows of its life (its phase, its worker, its grant): read from the life, stored nowhere
// else.
import type {
  Condition,
  DeviceRecovery,
  ErrorBody,
  GrantProgress,
  GrantedDevice,
  LeaseStatus,
  RequestPhase,
} from '../api/index.js';

export type Outcome = 'Failed' | 'Released';

export type RequestLife =
  /** Seen for the first time: its status says where it was (a restart picks it up there). */
  | { kind: 'new' }
  /** Pending: the release finalizer and the first assessment against the fleet. */
  | { kind: 'admitting' }
  /** In the queue: each walk may dispatch it. */
  | { kind: 'waiting' }
  /** In the queue, but the Lease of its last dispatch is still being deleted: no dispatch yet. */
  | { kind: 'withdrawing' }
  /**
   * Dispatched: the Lease's create is in flight (the agent may answer before it returns).
   * `progress`: the agent's progress making or booting the device, as the request's status has it.
   */
  | {
      kind: 'creatingLease';
      worker: string;
      acknowledged: boolean;
      progress?: GrantProgress | undefined;
    }
  /**
   * Dispatched: the Lease exists. `seen`: our watch has delivered it (its answer timer runs from
   * then); `acknowledged`: the agent said it is preparing a device (a longer timer); `progress`:
   * what it said of making or booting it, as the request's status has it.
   */
  | {
      kind: 'dispatched';
      worker: string;
      leaseUid: string | undefined;
      seen: boolean;
      acknowledged: boolean;
      progress?: GrantProgress | undefined;
    }
  | {
      kind: 'granted';
      worker: string;
      leaseUid: string | undefined;
      expiresAt?: number;
      /** When the lease started (its dispatch): an extension counts from here (lease-lifetime.ts). */
      startedAt?: number;
      /**
       * When this process saw its agent grant it; none for a grant it found made (a restart). The
       * wait and the lease's time count from here (usage, estimates), and routing assumes the
       * device taken from here for a while (assume-cache.ts).
       */
      grantedAt?: number;
      /** When this process first saw it granted: idle time counts from here before any exec. */
      idleFrom?: number;
      activity?: LeaseActivityFacts | undefined;
      /** The expiring-soon warning was given for the current expiry. */
      warned?: boolean;
      /** The device's recovery after a crash, as the request's status shows it (device-recovery.ts). */
      recovery?: RecoveryFacts | undefined;
    }
  /**
   * Failed or Released. It keeps what its status still shows and what the usage counts of the life
   * it left: the worker of its last dispatch, and when this process saw it granted.
   */
  | ({ kind: 'ended'; outcome: Outcome } & Ending)
  /**
   * The request is being deleted: its Lease goes, then its finalizer. `was`: the life it left, which
   * it shows until it is gone (its status is no longer written).
   */
  | { kind: 'releasing'; was: Exclude<RequestLife, { kind: 'releasing' }> };

/** What an ended life keeps of the one it ended from (`endingOf`). */
export interface Ending {
  worker?: string | undefined;
  grantedAt?: number | undefined;
}

export type LifeKind = RequestLife['kind'];

/** What the shell knows of a Lease of this request's name. */
export interface LeaseFacts {
  uid: string | undefined;
  worker: string | undefined;
  /** Its status, parsed; undefined when absent or unreadable. */
  status: LeaseStatus | undefined;
  /** spec.expiresAt, in milliseconds since the epoch, when readable. */
  expiresAt: number | undefined;
  /** spec.durationSeconds: the duration expiresAt counts from the dispatch, when written. */
  durationSeconds?: number | undefined;
  activity?: LeaseActivityFacts | undefined;
  /** Marked withdrawn or being deleted: it will never hold a device for the request. */
  lettingGo?: boolean;
}

/**
 * A leased device's recovery after a crash (api/device-recovery.ts): the Lease's `recovery` and
 * its DeviceRecovering condition, which the request's status copies while Granted.
 */
export interface RecoveryFacts {
  recovery?: DeviceRecovery | undefined;
  condition?: Condition | undefined;
}

/** The exec proxy's record of exec activity on the Lease, in milliseconds since the epoch. */
export interface LeaseActivityFacts {
  lastExecAt: number;
  runningUntil: number | undefined;
}

/**
 * What the request's spec and metadata say of its lifetime, and what the shell saw of its holder:
 * given to every step (the machine reads no clock and no object).
 */
export interface Lifetime {
  durationMs: number;
  /** The controller's --max-lease-duration. */
  maxLeaseMs: number;
  /** The expiring-soon warning this long before expiry; 0: none. */
  expiringSoonMs: number;
  holderRenewMs?: number | undefined;
  /** When the shell last saw the holder's session renewed (its own clock; first sight counts). */
  holderRenewedAt?: number | undefined;
  idleTimeoutMs?: number | undefined;
  /** The operator who force-released it (the annotation, admitted by the chart's policy). */
  forceReleasedBy?: string | undefined;
}

export type RequestEvent =
  /**
   * First sight: the phase its status holds, the grant's progress it shows (a restart does not
   * tell a stage again), and its Lease if one exists.
   */
  | {
      type: 'requestSeen';
      phase: RequestPhase;
      worker: string | undefined;
      progress?: GrantProgress | undefined;
      /** The device's recovery it shows (a restart does not tell it again). */
      recovery?: RecoveryFacts | undefined;
      lease?: LeaseFacts;
    }
  /** Its deletionTimestamp is set. */
  | { type: 'requestDeleting'; leaseExists: boolean }
  /** The finalizer is on and the fleet was asked: it may wait, or it fails now. */
  | { type: 'assessed'; failure?: ErrorBody | undefined }
  | { type: 'walkDispatched'; worker: string; stage: string }
  | { type: 'walkFailed'; error: ErrorBody }
  /** The create answered; `watched`: our watch already holds that very Lease. */
  | { type: 'leaseCreated'; worker: string; uid: string | undefined; watched: boolean }
  /** The create answered AlreadyExists; the Lease, if it could be read. */
  | { type: 'leaseExisted'; worker: string; lease: LeaseFacts | undefined }
  | { type: 'leaseCreateFailed'; worker: string }
  /** Our watch delivered the Lease (added or updated). */
  | { type: 'leaseSeen'; lease: LeaseFacts }
  /** Our watch delivered the Lease's deletion. */
  | { type: 'leaseGone'; uid: string | undefined }
  /** Our delete answered: `outright`, gone already (no finalizer held it, or not found). */
  | { type: 'leaseDeleteAnswered'; outright: boolean }
  /**
   * Our withdrawal lost to the agent's grant: both are written onto the Lease's resourceVersion,
   * the grant got there first, and the agent holds a device for the request. The Lease, granted.
   */
  | { type: 'withdrawalLostToGrant'; lease: LeaseFacts }
  /** The request changed: extended (spec.durationSeconds grew), or force-released. */
  | { type: 'requestChanged' }
  /** The holder renewed its session (context.lifetime.holderRenewedAt says when). */
  | { type: 'holderRenewed' }
  /** The worker of the current dispatch disconnected (its heartbeat lapsed). */
  | { type: 'workerGone'; worker: string }
  | { type: 'timerDue'; timer: MachineTimer };

export type MachineTimer = 'wait' | 'dispatch' | 'expiry' | 'expiringSoon' | 'holder' | 'idle';

export type StatusChange =
  | { kind: 'queued' }
  | { kind: 'dispatched'; worker: string; stage: string }
  | { kind: 'adopted'; worker: string | undefined }
  | { kind: 'granted'; device: GrantedDevice | undefined }
  | { kind: 'failed'; error: ErrorBody }
  /** Failed TIMEOUT: the shell words it (it knows the last reasons). */
  | { kind: 'timedOut' }
  | { kind: 'released'; reason: string; message: string }
  /** The lease's expiry, and whether it is within the warning time of it (ExpiringSoon). */
  | { kind: 'expiry'; expiresAt: number; expiringSoon: boolean }
  /** The agent's progress making or booting the device, copied while Dispatched (none: gone). */
  | { kind: 'progress'; progress: GrantProgress | undefined }
  /** The device's recovery after a crash, copied from the Lease while Granted. */
  | { kind: 'recovery'; facts: RecoveryFacts };

export type Effect =
  /** Add the release finalizer, then assess against the fleet (answered by `assessed`). */
  | { type: 'admit' }
  | { type: 'createLease'; worker: string; stage: string }
  /**
   * Take the agent's finalizer off the unheld Lease (withdrawn mark), then delete it; answered by
   * `leaseDeleteAnswered`, or by `withdrawalLostToGrant` when the agent granted it first.
   */
  | { type: 'withdrawLease' }
  | { type: 'deleteLease' }
  | { type: 'removeFinalizer' }
  | { type: 'writeStatus'; change: StatusChange }
  /**
   * The dispatch's Event is held until the agent answers or the dispatch times out (ADR 0005,
   * 0016): a grant tells it in its own Event; `acknowledged` (a cold boot begun) records it at
   * once; the other Events at once, after a dispatch still held.
   */
  | {
      type: 'recordEvent';
      event: 'dispatched' | 'acknowledged' | 'granted' | 'failed' | 'released';
    }
  /** An Event of a stage of making or booting the device (Provisioning, Booting). */
  | { type: 'recordProgress'; progress: GrantProgress }
  /**
   * An Event of the device's recovery under the lease (DeviceRecovering, with the cause and the
   * estimate; DeviceRecovered, with the cause it came back from).
   */
  | { type: 'recordRecovery'; step: 'recovering'; recovery: DeviceRecovery }
  | { type: 'recordRecovery'; step: 'recovered'; cause: string | undefined }
  /** An Event of the lease's lifetime (Extended, ExpiringSoon), with its message. */
  | { type: 'recordLifetimeEvent'; reason: string; message: string; warning?: boolean }
  /** Move the Lease's expiry (an extension); the agent honours it. */
  | { type: 'extendLease'; expiresAt: number; durationSeconds: number }
  /** Remember the worker of the dispatch for this request (memos.ts): a refusal, or a silence. */
  | {
      type: 'remember';
      worker: string;
      memo: { kind: 'refusal'; refusal: unknown } | { kind: 'unanswered' };
    }
  | { type: 'wakeAt'; timer: MachineTimer; at: number }
  /** Cancel timers: the ones named, or all of them (the request ended). */
  | { type: 'cancel'; timers: readonly MachineTimer[] | 'all' }
  | { type: 'walk' }
  /** A create failed: walk again after the request's backoff. */
  | { type: 'retryDispatch' };

export interface MachineContext {
  now: number;
  /** When a request that may wait times out; undefined for a request that may not. */
  waitDeadline: number | undefined;
  dispatchTimeoutMs: number;
  grantTimeoutMs: number;
  /** Absent in stories that do not need it: no extension, renewal, idle or warning rules. */
  lifetime?: Lifetime | undefined;
}

export interface Step {
  life: RequestLife;
  effects: Effect[];
}

/**
 * Every transition `next` makes between kinds of life, by event: the table the diagram in
 * docs/ARCHITECTURE.md draws. An event that leaves the kind as it is (and may still have effects)
 * is not listed.
 */
export const TRANSITIONS: readonly (readonly [LifeKind, RequestEvent['type'], LifeKind])[] = [
  ['new', 'requestSeen', 'admitting'],
  ['new', 'requestSeen', 'waiting'],
  ['new', 'requestSeen', 'dispatched'],
  ['new', 'requestSeen', 'withdrawing'],
  ['new', 'requestSeen', 'granted'],
  ['new', 'requestSeen', 'ended'],
  ['admitting', 'assessed', 'waiting'],
  ['admitting', 'assessed', 'ended'],
  ['waiting', 'walkDispatched', 'creatingLease'],
  ['waiting', 'walkFailed', 'ended'],
  ['waiting', 'timerDue', 'ended'],
  ['waiting', 'leaseSeen', 'granted'],
  ['withdrawing', 'leaseGone', 'waiting'],
  ['withdrawing', 'leaseDeleteAnswered', 'waiting'],
  ['withdrawing', 'walkFailed', 'ended'],
  ['withdrawing', 'timerDue', 'ended'],
  ['withdrawing', 'withdrawalLostToGrant', 'granted'],
  ['creatingLease', 'leaseCreated', 'dispatched'],
  ['creatingLease', 'leaseExisted', 'dispatched'],
  ['creatingLease', 'leaseExisted', 'granted'],
  ['creatingLease', 'leaseExisted', 'withdrawing'],
  ['creatingLease', 'leaseExisted', 'waiting'],
  ['creatingLease', 'leaseExisted', 'ended'],
  ['creatingLease', 'leaseCreateFailed', 'waiting'],
  ['creatingLease', 'leaseSeen', 'granted'],
  ['creatingLease', 'leaseSeen', 'withdrawing'],
  ['creatingLease', 'leaseSeen', 'ended'],
  ['creatingLease', 'workerGone', 'withdrawing'],
  ['creatingLease', 'workerGone', 'ended'],
  ['creatingLease', 'timerDue', 'withdrawing'],
  ['creatingLease', 'timerDue', 'ended'],
  ['dispatched', 'leaseSeen', 'granted'],
  ['dispatched', 'leaseSeen', 'withdrawing'],
  ['dispatched', 'leaseSeen', 'ended'],
  ['dispatched', 'leaseGone', 'waiting'],
  ['dispatched', 'leaseGone', 'ended'],
  ['dispatched', 'workerGone', 'withdrawing'],
  ['dispatched', 'workerGone', 'ended'],
  ['dispatched', 'timerDue', 'withdrawing'],
  ['dispatched', 'timerDue', 'ended'],
  ['granted', 'leaseSeen', 'ended'],
  // The device crashed and is booted again under the lease, then is back (device-recovery.ts).
  ['granted', 'leaseSeen', 'granted'],
  ['granted', 'leaseGone', 'ended'],
  ['granted', 'timerDue', 'ended'],
  // The lease's lifetime (lease-lifetime.ts): extended, warned, released by an operator.
  ['granted', 'requestChanged', 'granted'],
  ['granted', 'timerDue', 'granted'],
  ['granted', 'requestChanged', 'ended'],
  ['waiting', 'requestChanged', 'ended'],
  ['admitting', 'requestChanged', 'ended'],
  ['withdrawing', 'requestChanged', 'ended'],
  ['dispatched', 'requestChanged', 'ended'],
  ['creatingLease', 'leaseCreated', 'ended'],
  ['new', 'requestDeleting', 'releasing'],
  ['admitting', 'requestDeleting', 'releasing'],
  ['waiting', 'requestDeleting', 'releasing'],
  ['withdrawing', 'requestDeleting', 'releasing'],
  ['creatingLease', 'requestDeleting', 'releasing'],
  ['dispatched', 'requestDeleting', 'releasing'],
  ['granted', 'requestDeleting', 'releasing'],
  ['ended', 'requestDeleting', 'releasing'],
];

/** The phase a request's status shows in each kind of life (undefined: as it was first seen). */
export function phaseOf(life: RequestLife): RequestPhase | undefined {
  switch (life.kind) {
    case 'admitting':
      return 'Pending';
    case 'waiting':
    case 'withdrawing':
      return 'Waiting';
    case 'creatingLease':
    case 'dispatched':
      return 'Dispatched';
    case 'granted':
      return 'Granted';
    case 'ended':
      return life.outcome;
    case 'releasing':
      return phaseOf(life.was);
    case 'new':
      return undefined;
  }
}

/** The worker a request is dispatched to or granted on, if any. */
export function workerOf(life: RequestLife): string | undefined {
  return life.kind === 'creatingLease' || life.kind === 'dispatched' || life.kind === 'granted'
    ? life.worker
    : undefined;
}

/**
 * The worker a request's status names: the current dispatch's, or once it ended, its last one's
 * (a Lease that named none: none).
 */
export function shownWorkerOf(life: RequestLife): string | undefined {
  const shown = life.kind === 'releasing' ? life.was : life;
  return (shown.kind === 'ended' ? shown.worker : workerOf(shown)) || undefined;
}

/** The grant while the request holds it (also while it is being deleted from it). */
export function grantOf(life: RequestLife): Extract<RequestLife, { kind: 'granted' }> | undefined {
  const shown = life.kind === 'releasing' ? life.was : life;
  return shown.kind === 'granted' ? shown : undefined;
}

/** When this process saw its agent grant it, kept once the lease ended (the granted life's). */
export function grantedAtOf(life: RequestLife): number | undefined {
  const shown = life.kind === 'releasing' ? life.was : life;
  return shown.kind === 'granted' || shown.kind === 'ended' ? shown.grantedAt : undefined;
}

/** What a life ending now keeps of `life`: its dispatch's worker, its grant's time. */
export function endingOf(life: RequestLife): Ending {
  return {
    worker: workerOf(life),
    grantedAt: life.kind === 'granted' ? life.grantedAt : undefined,
  };
}

/** The life a request ends in, keeping what its status and its usage still need (`Ending`). */
export function ended(outcome: Outcome, { worker, grantedAt }: Ending = {}): RequestLife {
  return {
    kind: 'ended',
    outcome,
    ...(worker ? { worker } : {}),
    ...(grantedAt !== undefined ? { grantedAt } : {}),
  };
}
