// A virtual device's life, as a state machine (the device side of the controller's request
// machine). Pure: `nextDevice(device, event)` looks the event up in DEVICE_TRANSITIONS
// (device-transitions.ts) and answers the next life and the effects the shell carries out, in
// order, before it answers the row with one event; or `{ refused }` with why, when the table has
// no row for that state and event (or the row's guard does not hold). It never throws: a refused
// event changes nothing and the shell logs it. Nothing here reads the clock, the tools or the API.
//
// The shell's side of the contract:
//   - one device, one key in one work queue: a row's effects run in order and are answered by the
//     event its work ends in (`booted`, `reclaimed`, `stopped`, ...), so an event that comes while
//     they run (a lease ending during a recovery boot) is taken, and its effects run after them;
//   - a lease that ends while its device is being made or booted is answered once the grant
//     settles, as the granter does today (`leaseEnded` is refused in creating and booting);
//   - `crashed` or `crashedTooOften` is chosen with crashBudget (crash-budget.ts), and
//     `retryFailed` or `retriesExhausted` by the quarantine's own count of retries;
//   - `listed` is sent when a device is first listed, and when the tools report a change of power
//     the agent did not make.
//
// Physical devices are out of scope: they keep today's rules (granted when present, reset after a
// lease, shown absent when unplugged; inventory.ts and granter.ts). What runs on this machine:
//   - crash recovery (crash-recovery.ts: the leased, recovering and quarantined rows of a crash,
//     its 'recovering' life kept there);
//   - through device-steps.ts, which reads a device's life from the inventory (the one store of the
//     agent's state of a device), asks nextDevice, and writes the move back: grants (granter.ts:
//     grantWarm, grantCold, make, evict, taken inside the decision; device-preparation.ts: made,
//     makeFailed, booted, bootFailed, stopped/stopFailed of an eviction), a lease taken again
//     after a restart (granter.ts adopt: leaseResumed), a lease's end (lease-reclaim.ts:
//     leaseEnded, reclaimed, reclaimFailed), the idle sweep (idle-sweeper.ts) and quarantine
//     retries and unquarantine (quarantine-retrier.ts). Each move that starts work is taken inside
//     LeaseGranter.decide, so none races a grant.
// A device being made has no id yet: its life is kept under a placeholder id (device-steps.ts
// makingId) until `made`, when it moves to the device's own id.
// Not yet: listed/listedGone (the inventory takes a listing in itself), and the per-device work
// queue the contract above describes (the decisions serializer and the inventory's holds stand for
// it).
import type { DeviceState } from '../api/index.js';
import {
  LEASE_STATES,
  type DeviceEffect,
  type DeviceEffectType,
  type DeviceEvent,
  type DeviceGuard,
  type DeviceLife,
  type DeviceLifeState,
  type DeviceStep,
  type DeviceTransition,
} from './device-life.js';
import { DEVICE_TRANSITIONS } from './device-transitions.js';
import type { ReclaimPolicy } from './config.js';

export * from './device-life.js';
export { DEVICE_TRANSITIONS } from './device-transitions.js';

export function nextDevice(device: DeviceLife, event: DeviceEvent): DeviceStep {
  const rows = DEVICE_TRANSITIONS.filter(
    (row) => row.from === device.kind && row.event === event.type,
  );
  const row = rows.find((candidate) => holds(candidate.when, device, event));
  if (row === undefined) {
    const guards = rows.map((candidate) => candidate.when).join(' or ');
    return {
      refused:
        rows.length === 0
          ? `${event.type} is not taken while ${device.kind}`
          : `${event.type} is taken while ${device.kind} only when ${guards}`,
    };
  }
  return take(row, device, event);
}

/** Whether a row's guard holds for this device and event (a row without one always applies). */
export function holds(
  guard: DeviceGuard | undefined,
  device: DeviceLife,
  event: DeviceEvent,
): boolean {
  switch (guard) {
    case undefined:
      return true;
    case 'owned':
      return device.owned;
    case 'adopted':
      return !device.owned;
    case 'booted':
      return 'booted' in event && event.booted;
    case 'shut down':
      return 'booted' in event && !event.booted;
  }
}

function take(row: DeviceTransition, device: DeviceLife, event: DeviceEvent): DeviceStep {
  // A lease given by the event (a grant, a make, a resumed lease), else the one the device serves.
  const lease = 'lease' in event ? event.lease : device.lease;
  const policy = event.type === 'leaseEnded' ? event.reclaim : undefined;
  const effects: DeviceEffect[] = [];
  for (const type of row.effects) {
    const effect = effectOf(type, lease, policy);
    if (effect === undefined)
      return {
        refused: `${event.type} while ${device.kind} asks for ${type}, lacking its lease or policy`,
      };
    effects.push(effect);
  }
  const owned = ownedAfter(device, event);
  if (!LEASE_STATES.has(row.to)) return { state: { kind: row.to, owned }, effects, why: row.why };
  if (lease === undefined)
    return {
      refused: `${event.type} while ${device.kind} leads to ${row.to}, and no lease is known`,
    };
  return { state: { kind: row.to, owned, lease }, effects, why: row.why };
}

function ownedAfter(device: DeviceLife, event: DeviceEvent): boolean {
  if (event.type === 'make') return true;
  if (device.kind === 'new' && 'owned' in event) return event.owned;
  return device.owned;
}

/** The effect with what it acts on; undefined when the lease or the policy it needs is unknown. */
function effectOf(
  type: DeviceEffectType,
  lease: string | undefined,
  policy: ReclaimPolicy | undefined,
): DeviceEffect | undefined {
  switch (type) {
    case 'make':
    case 'grantLease':
    case 'stopExecs':
    case 'tellRecovering':
    case 'tellRecovered':
    case 'finishLease':
      return lease === undefined ? undefined : { type, lease };
    case 'refuseLease':
      return lease === undefined ? undefined : { type, lease, code: 'NO_CAPACITY' };
    case 'endLease':
      return lease === undefined ? undefined : { type, lease, code: 'LEASE_LOST' };
    case 'reclaim':
      return policy === undefined ? undefined : { type, policy };
    case 'boot':
    case 'shutdown':
    case 'delete':
    case 'healthCheck':
    case 'scheduleRetry':
    case 'cancelRetry':
      return { type };
  }
}

/**
 * The state the Worker's view and the planner show for a life (`shutdown`: not in the view, free
 * for a cold boot); undefined for a device that is not there. A device being made shows as
 * booting (the view names it `making <lease>`), and so does a quarantine retry (it takes a slot
 * while it boots); one recovering stays leased; one shutting down or being deleted shows as
 * reclaiming (busy, not grantable); a quarantined one waiting, for a retry or an operator, as
 * quarantined.
 */
export function viewStateOf(kind: DeviceLifeState): DeviceState | 'shutdown' | undefined {
  switch (kind) {
    case 'new':
    case 'gone':
      return undefined;
    case 'creating':
    case 'booting':
    case 'retrying':
      return 'booting';
    case 'shutdown':
    case 'ready':
    case 'leased':
    case 'reclaiming':
      return kind;
    case 'recovering':
      return 'leased';
    case 'shuttingDown':
    case 'deleting':
      return 'reclaiming';
    case 'quarantined':
    case 'awaitingOperator':
      return 'quarantined';
  }
}
