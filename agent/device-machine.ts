// A virtual device's life, as a state machine (the device side of the controller's request
// machine). Pure: `nextDevice(device, event)` looks the event up in DEVICE_TRANSITIONS
// (device-transitions.ts) and answers the next life and the effects the shell carries out, in
// order, before it answers the row with one event; or `{ refused }` with why, when the table has
// no row for that state and event (or the row's guard does not hold). It never throws: a refused
// event changes nothing and the shell logs it. Nothing here reads the clock, the tools or the API.
//
// The shell's side of the contract (device-steps.ts):
//   - the machine's state of each device is kept in one place, the inventory, and written only
//     through the shell; the planner and the Worker's view derive a device's state from it
//     (viewStateOf below);
//   - a taken move is written before its effects begin; they run in order and are answered by
//     the one event their work ends in (`booted`, `reclaimed`, `stopped`, ...), taken from the
//     life stored then, so a move made meanwhile (the device gone from the listing) refuses a stale
//     answer. No per-device work queue: a device in a busy state (booting, reclaiming,
//     shuttingDown, retrying, deleting) takes no new work until its answer, every move that starts
//     work is taken inside LeaseGranter.decide (one decision at a time), so none races a grant;
//   - a lease that ends while its device is being made or booted is answered once the grant
//     settles, as the granter does (`leaseEnded` is refused in creating and booting), and one that
//     ends while its device recovers is reclaimed once that boot settles (core.ts);
//   - `crashed` or `crashedTooOften` is chosen with crashBudget (crash-budget.ts), and
//     `retryFailed` or `retriesExhausted` by the quarantine's own count of retries;
//   - `listed` is sent when a device is first listed, and when the tools report a change of power
//     the agent did not make; `listedGone` when they no longer list it.
//
// Physical devices are out of scope: they keep their own rules (granted when present, reset after
// a lease, shown absent when unplugged; the inventory's holdPhysical, granter.ts). Every
// simulator and emulator moves on this machine, through device-steps.ts: what a listing says
// (listed, listedGone: device-steps.ts takeListing), grants (granter.ts: grantWarm, grantCold,
// make, evict, taken inside the decision; device-preparation.ts: made, makeFailed, booted,
// bootFailed, bootCancelled, stopped/stopFailed of an eviction), a lease taken again after a
// restart (granter.ts adopt: leaseResumed), a lease's end (lease-reclaim.ts: leaseEnded,
// reclaimed, reclaimFailed), a crash under a lease (crash-recovery.ts: crashed, crashedTooOften,
// recovered, bootFailed; and the lease of a device gone from the listing lost), the idle sweep
// (idle-sweeper.ts) and quarantine retries and unquarantine (quarantine-retrier.ts). A device
// being made has no id yet: its life is kept under a placeholder id (device-steps.ts makingId)
// until `made`, when it moves to the device's own id.
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
import type { InventoryState } from './planner.js';

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
 * The state the planner and the Worker's view show for a life (`shutdown`: not in the view, free
 * for a cold boot; `deleting`: not in the view, counting no slot); undefined for a device that is
 * not there. A device being made shows as booting (the view names it `making <lease>`), and so
 * does a quarantine retry (it takes a slot while it boots; the view says quarantined, with why);
 * one recovering stays leased; one shutting down shows as reclaiming (busy, not grantable); a
 * quarantined one waiting, for a retry or an operator, as quarantined. The inventory adds what the
 * tools say of a free device's power (inventory.ts).
 */
export function viewStateOf(kind: DeviceLifeState): InventoryState | undefined {
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
    case 'deleting':
      return kind;
    case 'recovering':
      return 'leased';
    case 'shuttingDown':
      return 'reclaiming';
    case 'quarantined':
    case 'awaitingOperator':
      return 'quarantined';
  }
}
