// A request's life, as a state machine. Pure: `next(life, event, context)` answers the next life
// and the effects the shell (request-shell.ts) carries out: Lease writes, status changes, Events,
// timers, walks. The shell turns what it sees (watch events, answers to its writes, timers) into
// events; nothing here reads the clock or the API. docs/ARCHITECTURE.md draws TRANSITIONS, and
// request-machine.test.ts fails when the drawing, this table and `next` disagree.
//
// Races this shape settles (each has a narrative test):
//   - a Lease deleted outright is gone before its DELETED event comes, so the request may be
//     dispatched again by then: news of a Lease whose uid is not the current dispatch's is late
//     news of an earlier one, and touches nothing;
//   - a dispatch that came to nothing is withdrawn (the agent's finalizer off with the withdrawn
//     mark, then the delete), and the request waits without a dispatch until that Lease is gone;
//   - a withdrawal that loses to the agent's grant (the grant was written first) keeps the grant:
//     deleting it would throw away a device the agent gave, and grant the request again elsewhere;
//   - a Lease being let go, seen while a create is in flight, is an earlier dispatch's (the
//     withdrawal's own update of a refused Lease), never a refusal of the new one;
//   - AlreadyExists on a create means an earlier process dispatched it: adopt that Lease;
//   - a withdrawal or delete waits for the request's create in flight (request-writes.ts), so a
//     create held by the API server is withdrawn once it lands, never left behind while the
//     request goes elsewhere; a Lease that lands unlooked-for all the same (an earlier process's
//     create) and is granted: a waiting request adopts it, an ended one deletes it;
//   - the agent's time to answer counts from when our watch delivers the Lease, not the create;
//   - the agent's progress (provisioning, booting) may come before the create answers: it is
//     written at once, its stage told once the dispatch has been; so is a crashed device's recovery.
import type { GrantProgress } from '../api/index.js';
import {
  ended,
  endingOf,
  type Effect,
  type LeaseFacts,
  type MachineContext,
  type MachineTimer,
  type RequestEvent,
  type RequestLife,
  type Step,
} from './request-life.js';
import { acknowledge, progressed } from './dispatch-progress.js';
import { grantedSeen } from './device-recovery.js';
import { backToQueue, enqueue, fail, giveUp, refused, requeue } from './queue-steps.js';
import {
  holderRenewed,
  lifetimeTimerDue,
  release,
  requestChanged,
  unlessForced,
} from './lease-lifetime.js';

export * from './request-life.js';

const stay = (life: RequestLife, effects: Effect[] = []): Step => ({ life, effects });

export function next(life: RequestLife, event: RequestEvent, context: MachineContext): Step {
  return unlessForced(nextStep(life, event, context), context);
}

function nextStep(life: RequestLife, event: RequestEvent, context: MachineContext): Step {
  if (life.kind === 'releasing') return whileReleasing(life, event);
  if (event.type === 'requestDeleting') {
    return {
      life: { kind: 'releasing', was: life },
      effects: [
        { type: 'cancel', timers: 'all' },
        { type: 'walk' },
        event.leaseExists ? { type: 'deleteLease' } : { type: 'removeFinalizer' },
      ],
    };
  }
  switch (event.type) {
    case 'requestSeen':
      return life.kind === 'new' ? recover(event, context) : stay(life);
    case 'assessed':
      if (life.kind !== 'admitting') return stay(life);
      return event.failure ? fail(event.failure) : enqueue(context);
    case 'walkDispatched':
      if (life.kind !== 'waiting') return stay(life);
      return {
        life: { kind: 'creatingLease', worker: event.worker, acknowledged: false },
        effects: [
          {
            type: 'writeStatus',
            change: { kind: 'dispatched', worker: event.worker, stage: event.stage },
          },
          { type: 'createLease', worker: event.worker, stage: event.stage },
        ],
      };
    case 'walkFailed':
      return life.kind === 'waiting' || life.kind === 'withdrawing'
        ? fail(event.error)
        : stay(life);
    case 'leaseCreated':
      return leaseCreated(life, event, context);
    case 'leaseExisted':
      if (life.kind !== 'creatingLease' || life.worker !== event.worker) return stay(life);
      // An earlier process dispatched it already: adopt that Lease, never a second one.
      return event.lease ? adopt(event.lease, context) : backToQueue();
    case 'leaseCreateFailed':
      if (life.kind !== 'creatingLease' || life.worker !== event.worker) return stay(life);
      return backToQueue();
    case 'leaseSeen':
      return leaseSeen(life, event.lease, context);
    case 'leaseGone':
      return leaseGone(life, event.uid, context);
    case 'leaseDeleteAnswered':
      if (!event.outright) return stay(life);
      return life.kind === 'withdrawing'
        ? { life: { kind: 'waiting' }, effects: [{ type: 'walk' }] }
        : stay(life, [{ type: 'walk' }]);
    case 'withdrawalLostToGrant':
      return withdrawalLostToGrant(life, event.lease, context);
    case 'workerGone':
      if (
        (life.kind === 'creatingLease' || life.kind === 'dispatched') &&
        life.worker === event.worker
      )
        return giveUp(life, context);
      return stay(life);
    case 'timerDue':
      return timerDue(life, event.timer, context);
    case 'requestChanged':
      return requestChanged(life, context);
    case 'holderRenewed':
      return holderRenewed(life, context);
  }
}

function whileReleasing(releasing: RequestLife, event: RequestEvent): Step {
  // Its Lease is gone: nothing holds the request any more.
  if (event.type === 'leaseGone') return stay(releasing, [{ type: 'removeFinalizer' }]);
  if (event.type === 'leaseDeleteAnswered' && event.outright)
    return stay(releasing, [{ type: 'removeFinalizer' }]);
  return stay(releasing);
}

/** Picks a request up from whatever state the API holds it in (first sight, or a restart). */
function recover(
  event: Extract<RequestEvent, { type: 'requestSeen' }>,
  context: MachineContext,
): Step {
  const lease = event.lease;
  switch (event.phase) {
    case 'Pending':
      // With a Lease: dispatched by an earlier process that died before it wrote the phase.
      return lease
        ? adopt(lease, context)
        : { life: { kind: 'admitting' }, effects: [{ type: 'admit' }] };
    case 'Waiting':
      return lease ? adopt(lease, context) : enqueue(context);
    case 'Dispatched':
      return lease
        ? adopt(lease, context, event.progress)
        : requeue(context, false, { worker: event.worker });
    case 'Granted': {
      if (!lease)
        return release('LeaseGone', 'its Lease no longer exists', false, { worker: event.worker });
      const granted: RequestLife = {
        kind: 'granted',
        worker: event.worker ?? lease.worker ?? '',
        leaseUid: undefined,
        ...(event.recovery ? { recovery: event.recovery } : {}),
      };
      return leaseSeen(granted, lease, context);
    }
    case 'Failed':
    case 'Released':
      return {
        life: ended(event.phase, { worker: event.worker }),
        effects: lease ? [{ type: 'deleteLease' }] : [],
      };
  }
}

/**
 * A Lease made by an earlier process (or an earlier create of ours): this dispatch's. `progress`:
 * what the request's status shows of it already (its stage was told by that process).
 */
function adopt(lease: LeaseFacts, context: MachineContext, progress?: GrantProgress): Step {
  const dispatched: RequestLife = {
    kind: 'dispatched',
    worker: lease.worker ?? '',
    leaseUid: lease.uid,
    seen: false,
    acknowledged: false,
    ...(progress ? { progress } : {}),
  };
  const first: Effect[] = [
    { type: 'writeStatus', change: { kind: 'adopted', worker: lease.worker } },
    { type: 'wakeAt', timer: 'dispatch', at: context.now + context.dispatchTimeoutMs },
  ];
  const then = leaseSeen(dispatched, lease, context);
  return { life: then.life, effects: [...first, ...then.effects] };
}

function leaseCreated(
  life: RequestLife,
  event: Extract<RequestEvent, { type: 'leaseCreated' }>,
  context: MachineContext,
): Step {
  if (life.kind !== 'creatingLease' || life.worker !== event.worker) return stay(life);
  const dispatched: RequestLife = {
    kind: 'dispatched',
    worker: life.worker,
    leaseUid: event.uid,
    seen: event.watched,
    acknowledged: life.acknowledged,
    ...(life.progress ? { progress: life.progress } : {}),
  };
  // The agent's time to answer counts from when the Lease could reach it: when our own watch
  // delivers it. A busy API server delivers late, and a timeout counted from the create gave up
  // on agents that had not yet been told. Should our watch never deliver it, a longer timeout
  // still ends the wait. An agent that acknowledged already has its longer timer running.
  const effects: Effect[] = [];
  if (!life.acknowledged)
    effects.push({
      type: 'wakeAt',
      timer: 'dispatch',
      at: context.now + context.dispatchTimeoutMs * (event.watched ? 1 : 3),
    });
  effects.push({ type: 'recordEvent', event: 'dispatched' });
  // Acknowledged already (a cold boot begun): the dispatch's Event need wait for nothing more.
  if (life.acknowledged) effects.push({ type: 'recordEvent', event: 'acknowledged' });
  // A stage reported before the create answered is told after the dispatch it belongs to.
  if (life.progress) effects.push({ type: 'recordProgress', progress: life.progress });
  return { life: dispatched, effects };
}

/** A Lease of a dispatch before the current one: its news touches nothing. */
function isEarlierLease(
  life: RequestLife,
  uid: string | undefined,
  deleted: boolean,
  lettingGo = false,
): boolean {
  if (life.kind === 'creatingLease') {
    // The create is in flight: a Lease deleted now is the earlier one (the new one is not there
    // to delete), and so is one being let go (withdrawn or being deleted: nothing lets the new
    // one go before its create has answered). Any other update may be the new Lease's answer
    // racing its create's response. A withdrawn Lease's late update read as the new dispatch's
    // refusal withdrew the new dispatch while its create was in flight; that create landed, its
    // agent granted it, and the request was dispatched and granted elsewhere too (the soak's
    // "granted under two Leases", a device held for nobody).
    return deleted || lettingGo;
  }
  if (life.kind !== 'dispatched' && life.kind !== 'granted') return false;
  return life.leaseUid !== undefined && uid !== life.leaseUid;
}

function leaseSeen(life: RequestLife, lease: LeaseFacts, context: MachineContext): Step {
  if (isEarlierLease(life, lease.uid, false, lease.lettingGo)) return stay(life);
  const status = lease.status;
  if (life.kind === 'creatingLease' || life.kind === 'dispatched') {
    if (lease.worker !== life.worker) return stay(life);
    if (!status) {
      if (
        life.kind === 'dispatched' &&
        !life.seen &&
        !life.acknowledged &&
        life.leaseUid !== undefined &&
        lease.uid === life.leaseUid
      ) {
        // First sight of the current dispatch's Lease: the agent's time to answer starts now.
        return stay({ ...life, seen: true }, [
          { type: 'wakeAt', timer: 'dispatch', at: context.now + context.dispatchTimeoutMs },
        ]);
      }
      return stay(life);
    }
    switch (status.phase) {
      case 'Granted': {
        const leaseUid = life.kind === 'dispatched' ? (life.leaseUid ?? lease.uid) : lease.uid;
        const granted: RequestLife = {
          kind: 'granted',
          worker: life.worker,
          leaseUid,
          grantedAt: context.now,
        };
        const settled = grantedSeen(granted, lease, context);
        // Granted before its create answered (the agent was quicker than the answer): the answer
        // will change nothing, so the dispatch is told here, and its grant's Event names it.
        const untold: Effect[] =
          life.kind === 'creatingLease' ? [{ type: 'recordEvent', event: 'dispatched' }] : [];
        return {
          life: settled.life,
          effects: [
            { type: 'cancel', timers: ['dispatch', 'wait'] },
            { type: 'writeStatus', change: { kind: 'granted', device: status.device } },
            ...settled.effects,
            ...untold,
            { type: 'recordEvent', event: 'granted' },
            { type: 'walk' },
          ],
        };
      }
      case 'Refused':
        return refused(status.refusal, life, context);
      case 'Pending':
        return progressed(acknowledge(life, context), status.progress);
      default:
        return refused(
          { code: 'LOST', message: `the worker marked it ${status.phase}` },
          life,
          context,
        );
    }
  }
  if (life.kind === 'granted') return grantedSeen(life, lease, context);
  if (status?.phase === 'Granted' && !lease.lettingGo) {
    // Granted, yet no dispatch of ours is current: the create of a dispatch given up was held by
    // the API server and landed after the withdrawal looked and found nothing. The agent holds a
    // device for it: a waiting request takes it; an ended one lets it go (the agent reclaims it).
    if (life.kind === 'waiting') return adopt(lease, context);
    if (life.kind === 'ended') return stay(life, [{ type: 'deleteLease' }]);
  }
  return stay(life);
}

function withdrawalLostToGrant(
  life: RequestLife,
  lease: LeaseFacts,
  context: MachineContext,
): Step {
  // A request that ended meanwhile (its wait timed out) has no use for it: the agent reclaims it.
  if (life.kind === 'ended') return stay(life, [{ type: 'deleteLease' }]);
  if (life.kind !== 'withdrawing') return stay(life);
  const dispatched: RequestLife = {
    kind: 'dispatched',
    worker: lease.worker ?? '',
    leaseUid: lease.uid,
    seen: true,
    acknowledged: true,
  };
  return leaseSeen(dispatched, lease, context);
}

function leaseGone(life: RequestLife, uid: string | undefined, context: MachineContext): Step {
  if (isEarlierLease(life, uid, true)) return stay(life, [{ type: 'walk' }]);
  switch (life.kind) {
    case 'withdrawing':
      return { life: { kind: 'waiting' }, effects: [{ type: 'walk' }] };
    case 'dispatched':
      return requeue(context, false, endingOf(life));
    case 'granted':
      return release('LeaseDeleted', 'its Lease was deleted', false, endingOf(life));
    default:
      return stay(life, [{ type: 'walk' }]);
  }
}

function timerDue(life: RequestLife, timer: MachineTimer, context: MachineContext): Step {
  switch (timer) {
    case 'wait':
      return life.kind === 'waiting' || life.kind === 'withdrawing' ? fail() : stay(life);
    case 'dispatch':
      return life.kind === 'creatingLease' || life.kind === 'dispatched'
        ? giveUp(life, context)
        : stay(life);
    case 'expiry':
      if (life.kind !== 'granted') return stay(life);
      return release('Expired', 'the lease reached its expiry', true, endingOf(life));
    default:
      return lifetimeTimerDue(life, timer, context) ?? stay(life);
  }
}
