// A granted request's device that crashed and is booted again by its agent under the same lease,
// the part of the request machine (request-machine.ts) after the grant: the Lease's `recovery` and
// its DeviceRecovering condition (api/device-recovery.ts) are copied to the request's status while
// it is Granted, and each start and end of a recovery is an Event. Level-based: the request shows
// what the Lease says now, whatever it missed between two sights of it; an Event is recorded only
// for a change the request's status does not show yet, so a restart (which reads the status back)
// never tells one again. Pure.
import {
  DEVICE_RECOVERING,
  sameJson,
  type Condition,
  type LeaseStatus,
  type LeaseRequestStatus,
} from '../api/index.js';
import { grantedLeaseSeen } from './lease-lifetime.js';
import type {
  Effect,
  LeaseFacts,
  MachineContext,
  RecoveryFacts,
  RequestLife,
  Step,
} from './request-life.js';

type Granted = Extract<RequestLife, { kind: 'granted' }>;

/** A granted request's Lease, seen: its lifetime (lease-lifetime.ts), then its device's recovery. */
export function grantedSeen(life: Granted, lease: LeaseFacts, context: MachineContext): Step {
  return recoverySeen(grantedLeaseSeen(life, lease, context), recoveryOf(lease.status));
}

/** The recovery a Lease's or a request's status shows; empty when its device never crashed. */
export function recoveryOf(
  status: Pick<LeaseStatus | LeaseRequestStatus, 'recovery' | 'conditions'> | undefined,
): RecoveryFacts {
  const condition = status?.conditions?.find((c) => c.type === DEVICE_RECOVERING);
  return {
    ...(status?.recovery ? { recovery: status.recovery } : {}),
    ...(condition ? { condition } : {}),
  };
}

/** The device is being booted again: the Lease says so with its recovery or its condition. */
export function isRecovering(facts: RecoveryFacts | undefined): boolean {
  return facts?.recovery !== undefined || facts?.condition?.status === 'True';
}

/**
 * The Lease's recovery, seen while granted: a change is one status write; a recovery begun (or a
 * new crash: another `since`) is a DeviceRecovering Event, a recovery ended a DeviceRecovered one
 * (also when the request never saw it begin: the controller was away the whole time).
 */
export function recoverySeen(step: Step, seen: RecoveryFacts): Step {
  const { life } = step;
  if (life.kind !== 'granted') return step;
  const shown: RecoveryFacts = life.recovery ?? {};
  if (sameJson(shown, seen)) return step;
  const effects: Effect[] = [
    ...step.effects,
    { type: 'writeStatus', change: { kind: 'recovery', facts: seen } },
  ];
  if (isRecovering(seen)) {
    const again = !isRecovering(shown) || sinceOf(shown) !== sinceOf(seen);
    if (again && seen.recovery)
      effects.push({ type: 'recordRecovery', step: 'recovering', recovery: seen.recovery });
  } else if (seen.condition?.status === 'False' && backAgain(shown, seen.condition)) {
    effects.push({ type: 'recordRecovery', step: 'recovered', cause: shown.recovery?.cause });
  }
  const recovered: Granted = { ...life, recovery: seen };
  return { life: recovered, effects };
}

/** When the recovery began: the Lease's `since`, else when its condition turned True. */
function sinceOf(facts: RecoveryFacts): string | undefined {
  return facts.recovery?.since ?? facts.condition?.lastTransitionTime;
}

/** The request showed the device recovering, or not this recovery's end. */
function backAgain(shown: RecoveryFacts, condition: Condition): boolean {
  if (isRecovering(shown)) return true;
  return shown.condition?.lastTransitionTime !== condition.lastTransitionTime;
}
