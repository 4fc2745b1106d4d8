// A virtual device's life in the agent's hands, as types: its states, the events that move it,
// the effects a move asks for, the guards a row may carry. The table is device-transitions.ts, the
// machine that looks it up device-machine.ts. Types only (no I/O, no clock).
import type { ReclaimPolicy } from './config.js';

/**
 * Where a simulator or emulator is in the agent's hands. States with a lease (`LEASE_STATES`) hold
 * the lease's name in the life.
 */
export type DeviceLifeState =
  /** Not taken in yet: about to be listed for the first time, or made for a lease. */
  | 'new'
  /** The tool is making it for a lease (a placeholder that holds the slot). */
  | 'creating'
  /** It exists, shut down: free for a cold grant. */
  | 'shutdown'
  /** Booting for a lease (a cold grant). */
  | 'booting'
  /** Booted and idle: free for a warm grant. */
  | 'ready'
  | 'leased'
  /** Leased, crashed, being shut down and booted again under the same lease. */
  | 'recovering'
  /** Its lease ended: stopped, then erased or shut down (and booted again) per the reclaim policy. */
  | 'reclaiming'
  /** Being shut down while no lease holds it (idle, evicted for another's boot, unquarantined). */
  | 'shuttingDown'
  /** Broken: waits for its next retry. */
  | 'quarantined'
  /** A quarantine retry: booted and health-checked. */
  | 'retrying'
  /** Retries used up, not the agent's to delete: quarantined until an operator unquarantines it. */
  | 'awaitingOperator'
  /** The tool is deleting it (the agent made it). */
  | 'deleting'
  /** No longer exists. */
  | 'gone';

/** The states in which a lease holds the device (or is being served by it). */
export const LEASE_STATES: ReadonlySet<DeviceLifeState> = new Set([
  'creating',
  'booting',
  'leased',
  'recovering',
  'reclaiming',
]);

export interface DeviceLife {
  kind: DeviceLifeState;
  /** The agent made it (in its own place): it may delete it. An adopted device is never deleted. */
  owned: boolean;
  /** The lease it serves; set exactly in LEASE_STATES. */
  lease?: string;
}

/** The life of a device the machine has not taken in yet. */
export const NEW_DEVICE: DeviceLife = { kind: 'new', owned: false };

/**
 * What moves a device. The shell sends `listed` when it first sees a device or the tools report a
 * change of power it did not make; the answer to a row's effects is one event (`made`, `booted`,
 * `reclaimed`, `stopped`, `deleted`, `retryPassed`, or their failures).
 */
export type DeviceEvent =
  /** The tools list it (booted or shut down); `owned`: in the agent's own place, not adopted. */
  | { type: 'listed'; owned: boolean; booted: boolean }
  /** A Lease granted on it before the agent restarted, still Granted, and the device listed. */
  | { type: 'leaseResumed'; lease: string }
  /** The planner chose to make a device of the request's model for `lease`. */
  | { type: 'make'; lease: string }
  | { type: 'made' }
  | { type: 'makeFailed' }
  /** The planner granted it warm (it is ready) or cold (it is shut down, to boot). */
  | { type: 'grantWarm'; lease: string }
  | { type: 'grantCold'; lease: string }
  | { type: 'booted' }
  | { type: 'bootFailed' }
  /** A cold grant's boot is not begun: a device it needed room from would not shut down. */
  | { type: 'bootCancelled' }
  /** Its Lease was deleted or expired: reclaim it per the agent's reclaim policy. */
  | { type: 'leaseEnded'; reclaim: ReclaimPolicy }
  /** The reclaim is done; `booted`: it was booted again (erase-keep-warm), else it is shut down. */
  | { type: 'reclaimed'; booted: boolean }
  | { type: 'reclaimFailed' }
  /** While leased: the tools report it down, its process exited, or its health check failed. */
  | { type: 'crashed' }
  /** As `crashed`, but the crash budget is spent (crashBudget in crash-budget.ts). */
  | { type: 'crashedTooOften' }
  /** Recovery's boot is done (the same lease goes on). A failed one is `bootFailed`. */
  | { type: 'recovered' }
  /** Shut it down to make room for another device's cold boot (the planner's eviction). */
  | { type: 'evict' }
  /** Booted and unleased past `idle.shutdownAfter`. */
  | { type: 'idleShutdown' }
  /** Unleased past `idle.deleteAfter`. */
  | { type: 'idleDelete' }
  | { type: 'stopped' }
  | { type: 'stopFailed' }
  | { type: 'deleted' }
  | { type: 'deleteFailed' }
  /** A quarantined device's backoff ran out: try it again. */
  | { type: 'quarantineRetry' }
  | { type: 'retryPassed' }
  /** The retry failed and retries are left. */
  | { type: 'retryFailed' }
  /** The retry failed and it was the last. */
  | { type: 'retriesExhausted' }
  /** An operator put it back in service (`kubectl simlock device unquarantine`, the console). */
  | { type: 'unquarantine' }
  /** The tools no longer list it. */
  | { type: 'listedGone' };

export type DeviceEventType = DeviceEvent['type'];

/** Every event type, in the order of the union (the tests walk them all). */
export const DEVICE_EVENT_TYPES: readonly DeviceEventType[] = [
  'listed',
  'leaseResumed',
  'make',
  'made',
  'makeFailed',
  'grantWarm',
  'grantCold',
  'booted',
  'bootFailed',
  'bootCancelled',
  'leaseEnded',
  'reclaimed',
  'reclaimFailed',
  'crashed',
  'crashedTooOften',
  'recovered',
  'evict',
  'idleShutdown',
  'idleDelete',
  'stopped',
  'stopFailed',
  'deleted',
  'deleteFailed',
  'quarantineRetry',
  'retryPassed',
  'retryFailed',
  'retriesExhausted',
  'unquarantine',
  'listedGone',
];

/**
 * What the shell carries out, in a row's order, before it answers the row with one event. Those
 * naming a lease act on the lease the device served or is given.
 */
export type DeviceEffect =
  /** Make the device (the driver's create) for the lease. */
  | { type: 'make'; lease: string }
  | { type: 'boot' }
  /** Shut it down (already down is fine). */
  | { type: 'shutdown' }
  /** Delete it with the tools (only ever for a device the agent made). */
  | { type: 'delete' }
  /** Run the driver's cheap health check on it. */
  | { type: 'healthCheck' }
  /** erase-keep-warm: erase, boot; erase: erase (left shut down); shutdown: shut down. */
  | { type: 'reclaim'; policy: ReclaimPolicy }
  /** Answer the Lease Granted with this device. */
  | { type: 'grantLease'; lease: string }
  /** Answer the Lease refused (the device could not be made or booted). */
  | { type: 'refuseLease'; lease: string; code: 'NO_CAPACITY' }
  /** Mark the Lease lost: the holder is told; its finalizer comes off when it is deleted. */
  | { type: 'endLease'; lease: string; code: 'LEASE_LOST' }
  /** Stop the tools the lease runs on the device. */
  | { type: 'stopExecs'; lease: string }
  /** Tell the holder (condition DeviceRecovering, an Event): execs fail UNAVAILABLE meanwhile. */
  | { type: 'tellRecovering'; lease: string }
  /** Tell the holder it is back (condition DeviceRecovered, an Event). */
  | { type: 'tellRecovered'; lease: string }
  /** The device is reclaimed (or lost in reclaiming): take the agent's finalizer off the Lease. */
  | { type: 'finishLease'; lease: string }
  /** Wake for the next `quarantineRetry` after the backoff. */
  | { type: 'scheduleRetry' }
  /** Forget the pending quarantine retry. */
  | { type: 'cancelRetry' };

export type DeviceEffectType = DeviceEffect['type'];

/**
 * A condition a row may carry: `owned`/`adopted` read the life (did the agent make it?),
 * `booted`/`shut down` the event's `booted` (`listed`, `reclaimed`).
 */
export type DeviceGuard = 'owned' | 'adopted' | 'booted' | 'shut down';

export interface DeviceTransition {
  from: DeviceLifeState;
  event: DeviceEventType;
  /** The row applies only when this holds. */
  when?: DeviceGuard;
  to: DeviceLifeState;
  effects: readonly DeviceEffectType[];
  /** Why the row is there: what a log line says when the shell takes it. */
  why: string;
}

/** The next life and what to carry out, or why the event is not taken in this state. */
export type DeviceStep =
  { state: DeviceLife; effects: DeviceEffect[]; why: string } | { refused: string };
