// A granted lease's lifetime, the part of the request machine (request-machine.ts) after the
// grant: its expiry and the warning before it, an extension (spec.durationSeconds grew) moving the
// expiry, the holder's renewals (HolderGone), idle reclaim that counts exec activity (Idle), and a
// force release by an operator. Pure: the facts come in the context's `lifetime` and the Lease's
// facts, the moments go out as timers (ADR 0008).
import { LIFETIME_REASONS } from '../api/index.js';
import {
  ended,
  endingOf,
  type Effect,
  type Ending,
  type LeaseFacts,
  type MachineContext,
  type MachineTimer,
  type RequestLife,
  type Step,
} from './request-life.js';

type Granted = Extract<RequestLife, { kind: 'granted' }>;

const stay = (life: RequestLife, effects: Effect[] = []): Step => ({ life, effects });

/**
 * Ends the request Released with the reason; a granted one's Lease is deleted too. `ending`: what
 * the ended life keeps of the one it left (its worker, its grant's time).
 */
export function release(
  reason: string,
  message: string,
  deleteLease = false,
  ending?: Ending,
): Step {
  const effects: Effect[] = [
    { type: 'cancel', timers: 'all' },
    { type: 'writeStatus', change: { kind: 'released', reason, message } },
    { type: 'recordEvent', event: 'released' },
    { type: 'walk' },
  ];
  if (deleteLease) effects.push({ type: 'deleteLease' });
  return { life: ended('Released', ending), effects };
}

/** A granted request's Lease, seen: as granted on first sight, its expiry and activity after. */
export function grantedLeaseSeen(life: Granted, lease: LeaseFacts, context: MachineContext): Step {
  const status = lease.status;
  if (status && status.phase !== 'Granted') {
    return release(
      status.phase,
      status.message ?? `the worker marked the lease ${status.phase}`,
      true,
      endingOf(life),
    );
  }
  let changed: Granted = life;
  if (life.expiresAt === undefined && lease.expiresAt !== undefined) {
    const durationMs =
      lease.durationSeconds !== undefined
        ? lease.durationSeconds * 1000
        : (context.lifetime?.durationMs ?? 0);
    changed = {
      ...changed,
      expiresAt: lease.expiresAt,
      startedAt: lease.expiresAt - durationMs,
      idleFrom: life.idleFrom ?? context.now,
    };
  }
  if (!sameActivity(life.activity, lease.activity))
    changed = { ...changed, activity: lease.activity };
  if (changed === life) return stay(life);
  const first = life.expiresAt === undefined;
  const settled = first ? settle(changed, context) : { life: changed, effects: [] };
  return { life: settled.life, effects: [...settled.effects, ...wakes(settled.life, context)] };
}

/** The first sight of the grant, or an extension: the expiry as the request's duration says. */
function settle(life: Granted, context: MachineContext): { life: Granted; effects: Effect[] } {
  const effects: Effect[] = [];
  const lifetime = context.lifetime;
  let settled = life;
  if (lifetime && life.startedAt !== undefined && life.expiresAt !== undefined) {
    const target = life.startedAt + Math.min(lifetime.durationMs, lifetime.maxLeaseMs);
    if (target > life.expiresAt) {
      settled = { ...life, expiresAt: target, warned: false };
      const capped = lifetime.durationMs > lifetime.maxLeaseMs ? ' (capped at the maximum)' : '';
      effects.push(
        {
          type: 'extendLease',
          expiresAt: target,
          durationSeconds: Math.round((target - life.startedAt) / 1000),
        },
        {
          type: 'recordLifetimeEvent',
          reason: LIFETIME_REASONS.extended,
          message: `Extended to ${new Date(target).toISOString()}${capped}`,
        },
      );
    }
  }
  if (settled.expiresAt !== undefined) {
    effects.push(
      { type: 'wakeAt', timer: 'expiry', at: settled.expiresAt },
      {
        type: 'writeStatus',
        change: {
          kind: 'expiry',
          expiresAt: settled.expiresAt,
          expiringSoon: settled.warned === true,
        },
      },
    );
  }
  return { life: settled, effects };
}

/** The request changed: force-released by an operator, or extended. */
export function requestChanged(life: RequestLife, context: MachineContext): Step {
  const by = context.lifetime?.forceReleasedBy;
  if (by !== undefined) {
    switch (life.kind) {
      case 'granted':
      case 'dispatched':
        return forceRelease(by, true, life);
      // A withdrawal in flight deletes the Lease; one that loses to a grant deletes it then.
      case 'waiting':
      case 'withdrawing':
      case 'admitting':
        return forceRelease(by, false, life);
      // The create is in flight: let go once it answers (see `unlessForced`).
      default:
        return stay(life);
    }
  }
  if (life.kind !== 'granted') return stay(life);
  const settled = settle(life, context);
  if (settled.life === life) return stay(life);
  return { life: settled.life, effects: [...settled.effects, ...wakes(settled.life, context)] };
}

/**
 * A force-released request never stays dispatched or granted: a step that would leave it so (a
 * create that answered after the release was asked, a grant, an adoption after a restart) lets the
 * Lease go instead, after the step's own effects.
 */
export function unlessForced(step: Step, context: MachineContext): Step {
  const by = context.lifetime?.forceReleasedBy;
  if (by === undefined || (step.life.kind !== 'dispatched' && step.life.kind !== 'granted'))
    return step;
  const released = forceRelease(by, true, step.life);
  return { life: released.life, effects: [...step.effects, ...released.effects] };
}

function forceRelease(by: string, deleteLease: boolean, from: RequestLife): Step {
  const message = `force-released by ${by}`;
  return release(LIFETIME_REASONS.forceReleased, message, deleteLease, endingOf(from));
}

/** The holder renewed: its deadline moves. */
export function holderRenewed(life: RequestLife, context: MachineContext): Step {
  const deadline = holderDeadline(context);
  if (deadline === undefined || (life.kind !== 'granted' && life.kind !== 'waiting'))
    return stay(life);
  return stay(life, [{ type: 'wakeAt', timer: 'holder', at: deadline }]);
}

/** The holder's deadline while a request waits (set when it is queued). */
export function waitingWakes(context: MachineContext): Effect[] {
  const deadline = holderDeadline(context);
  return deadline === undefined ? [] : [{ type: 'wakeAt', timer: 'holder', at: deadline }];
}

/** A lifetime timer fell due; undefined for a timer that is not one of these. */
export function lifetimeTimerDue(
  life: RequestLife,
  timer: MachineTimer,
  context: MachineContext,
): Step | undefined {
  const { now, lifetime } = context;
  switch (timer) {
    case 'holder': {
      const deadline = holderDeadline(context);
      if (deadline === undefined || (life.kind !== 'granted' && life.kind !== 'waiting'))
        return stay(life);
      if (now < deadline) return stay(life, [{ type: 'wakeAt', timer: 'holder', at: deadline }]);
      const seconds = Math.round((lifetime?.holderRenewMs ?? 0) / 1000);
      return release(
        LIFETIME_REASONS.holderGone,
        `its holder did not renew its session within ${seconds}s`,
        life.kind === 'granted',
        endingOf(life),
      );
    }
    case 'idle': {
      if (life.kind !== 'granted') return stay(life);
      const deadline = idleDeadline(life, context);
      if (deadline === undefined) return stay(life);
      if (now < deadline) return stay(life, [{ type: 'wakeAt', timer: 'idle', at: deadline }]);
      const seconds = Math.round((lifetime?.idleTimeoutMs ?? 0) / 1000);
      const message = `no exec on it for ${seconds}s`;
      return release(LIFETIME_REASONS.idle, message, true, endingOf(life));
    }
    case 'expiringSoon': {
      if (life.kind !== 'granted' || life.warned === true || life.expiresAt === undefined)
        return stay(life);
      const warnAt = life.expiresAt - (lifetime?.expiringSoonMs ?? 0);
      if (!lifetime || lifetime.expiringSoonMs <= 0 || now >= life.expiresAt) return stay(life);
      if (now < warnAt) return stay(life, [{ type: 'wakeAt', timer: 'expiringSoon', at: warnAt }]);
      const at = new Date(life.expiresAt).toISOString();
      return stay({ ...life, warned: true }, [
        {
          type: 'writeStatus',
          change: { kind: 'expiry', expiresAt: life.expiresAt, expiringSoon: true },
        },
        {
          type: 'recordLifetimeEvent',
          reason: LIFETIME_REASONS.expiringSoon,
          message: `The lease expires at ${at}, in ${Math.ceil((life.expiresAt - now) / 1000)}s; kubectl simlock extend keeps it`,
          warning: true,
        },
      ]);
    }
    default:
      return undefined;
  }
}

/** The wakes a granted lease needs: the warning before its expiry, its holder, its idle time. */
function wakes(life: Granted, context: MachineContext): Effect[] {
  const effects: Effect[] = [];
  const lifetime = context.lifetime;
  if (lifetime && lifetime.expiringSoonMs > 0 && life.expiresAt !== undefined && !life.warned)
    effects.push({
      type: 'wakeAt',
      timer: 'expiringSoon',
      at: Math.max(context.now, life.expiresAt - lifetime.expiringSoonMs),
    });
  const holder = holderDeadline(context);
  if (holder !== undefined) effects.push({ type: 'wakeAt', timer: 'holder', at: holder });
  const idle = idleDeadline(life, context);
  if (idle !== undefined) effects.push({ type: 'wakeAt', timer: 'idle', at: idle });
  return effects;
}

/** A renewal missed by more than one interval: the last one seen, plus the interval. */
function holderDeadline(context: MachineContext): number | undefined {
  const lifetime = context.lifetime;
  if (lifetime?.holderRenewMs === undefined) return undefined;
  return (lifetime.holderRenewedAt ?? context.now) + lifetime.holderRenewMs;
}

/** Idle from the grant, the last exec, or the end of the one that runs, whichever is last. */
function idleDeadline(life: Granted, context: MachineContext): number | undefined {
  const timeout = context.lifetime?.idleTimeoutMs;
  if (timeout === undefined) return undefined;
  const activity = life.activity;
  const since = Math.max(
    life.idleFrom ?? context.now,
    activity?.lastExecAt ?? 0,
    activity?.runningUntil ?? 0,
  );
  return since + timeout;
}

function sameActivity(
  a: LeaseFacts['activity'] | undefined,
  b: LeaseFacts['activity'] | undefined,
): boolean {
  return a?.lastExecAt === b?.lastExecAt && a?.runningUntil === b?.runningUntil;
}
