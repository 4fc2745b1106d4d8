// The transition table of a virtual device's life: every move there is, with what it asks the
// shell to do and why. device-machine.ts looks it up; docs/AGENT.md ("A device's life") draws it,
// and device-machine-drawing.test.ts fails when the drawing and this table differ. An event with
// no row for the device's state is refused.
//
// Rules the rows keep (device-machine.test.ts checks each over the whole table):
//   - a device is granted only when ready (warm) or shut down (cold), or made for the lease; a
//     lease from before a restart is taken back only from those states too;
//   - idle shutdown and delete start only from ready or shut down, so they never take a device a
//     grant holds: whichever event comes first moves the device, the other is refused;
//   - only a device the agent made (`owned`) is ever deleted;
//   - a crash under a lease boots the device again under that lease; a crash past the budget
//     ends the lease LEASE_LOST and quarantines the device.
import type { DeviceTransition } from './device-life.js';

export const DEVICE_TRANSITIONS: readonly DeviceTransition[] = [
  // --- taking a device in ---
  {
    from: 'new',
    event: 'listed',
    when: 'booted',
    to: 'ready',
    effects: [],
    why: 'listed booted and unleased: warm',
  },
  {
    from: 'new',
    event: 'listed',
    when: 'shut down',
    to: 'shutdown',
    effects: [],
    why: 'listed shut down: free for a cold grant',
  },
  {
    from: 'ready',
    event: 'leaseResumed',
    to: 'leased',
    effects: [],
    why: 'a lease granted before the agent restarted still holds it',
  },
  {
    from: 'shutdown',
    event: 'leaseResumed',
    to: 'leased',
    effects: [],
    why: 'a lease granted before the agent restarted still holds it: found down, it is a crash',
  },
  {
    from: 'new',
    event: 'make',
    to: 'creating',
    effects: ['make'],
    why: 'no device of the request is free to boot: one is made for the lease',
  },
  // --- granting ---
  {
    from: 'creating',
    event: 'made',
    to: 'booting',
    effects: ['boot'],
    why: 'made for the lease: booted for it',
  },
  {
    from: 'creating',
    event: 'makeFailed',
    to: 'gone',
    effects: ['refuseLease'],
    why: 'it could not be made: the lease is refused and the slot freed',
  },
  {
    from: 'shutdown',
    event: 'grantCold',
    to: 'booting',
    effects: ['boot'],
    why: 'a cold grant: booted for the lease',
  },
  {
    from: 'ready',
    event: 'grantWarm',
    to: 'leased',
    effects: ['grantLease'],
    why: 'a warm grant: the lease is answered at once',
  },
  {
    from: 'booting',
    event: 'booted',
    to: 'leased',
    effects: ['grantLease'],
    why: 'booted: the lease is answered',
  },
  {
    from: 'booting',
    event: 'bootFailed',
    to: 'quarantined',
    effects: ['refuseLease', 'shutdown', 'scheduleRetry'],
    why: 'it would not boot: the lease is refused, the device quarantined and tried again later',
  },
  {
    from: 'booting',
    event: 'bootCancelled',
    to: 'shutdown',
    effects: ['refuseLease'],
    why: 'the room it needed could not be made: the lease is refused, the device left shut down',
  },
  // --- under a lease ---
  {
    from: 'leased',
    event: 'leaseEnded',
    to: 'reclaiming',
    effects: ['stopExecs', 'reclaim'],
    why: 'the lease ended: its tools stopped, the device reclaimed',
  },
  {
    from: 'leased',
    event: 'crashed',
    to: 'recovering',
    effects: ['stopExecs', 'tellRecovering', 'shutdown', 'boot'],
    why: 'it crashed: booted again under the same lease, the holder told',
  },
  {
    from: 'leased',
    event: 'crashedTooOften',
    to: 'quarantined',
    effects: ['stopExecs', 'endLease', 'shutdown', 'scheduleRetry'],
    why: 'it crashed too often: the lease is lost, the device quarantined',
  },
  {
    from: 'recovering',
    event: 'recovered',
    to: 'leased',
    effects: ['tellRecovered'],
    why: 'booted again: the holder is told it is back',
  },
  {
    from: 'recovering',
    event: 'bootFailed',
    to: 'quarantined',
    effects: ['endLease', 'shutdown', 'scheduleRetry'],
    why: 'it would not boot again: the lease is lost, the device quarantined',
  },
  {
    from: 'recovering',
    event: 'leaseEnded',
    to: 'reclaiming',
    effects: ['stopExecs', 'reclaim'],
    why: 'the lease ended while it recovered: reclaimed once the boot settles',
  },
  {
    from: 'reclaiming',
    event: 'reclaimed',
    when: 'booted',
    to: 'ready',
    effects: ['finishLease'],
    why: 'erased and booted again: warm',
  },
  {
    from: 'reclaiming',
    event: 'reclaimed',
    when: 'shut down',
    to: 'shutdown',
    effects: ['finishLease'],
    why: 'erased or shut down: free for a cold grant',
  },
  {
    from: 'reclaiming',
    event: 'reclaimFailed',
    to: 'quarantined',
    effects: ['finishLease', 'shutdown', 'scheduleRetry'],
    why: 'the reclaim failed: the device is quarantined, the Lease let go',
  },
  // --- idle ---
  {
    from: 'ready',
    event: 'evict',
    to: 'shuttingDown',
    effects: ['shutdown'],
    why: 'shut down to make room for another device',
  },
  {
    from: 'ready',
    event: 'idleShutdown',
    to: 'shuttingDown',
    effects: ['shutdown'],
    why: 'booted and unleased too long: shut down',
  },
  {
    from: 'ready',
    event: 'listed',
    when: 'shut down',
    to: 'shutdown',
    effects: [],
    why: 'it went down while unleased: nothing to tell',
  },
  {
    from: 'shutdown',
    event: 'listed',
    when: 'booted',
    to: 'ready',
    effects: [],
    why: 'booted by someone else: warm',
  },
  {
    from: 'shuttingDown',
    event: 'stopped',
    to: 'shutdown',
    effects: [],
    why: 'shut down: free for a cold grant',
  },
  {
    from: 'shuttingDown',
    event: 'stopFailed',
    to: 'quarantined',
    effects: ['scheduleRetry'],
    why: 'it would not shut down: quarantined',
  },
  {
    from: 'ready',
    event: 'idleDelete',
    when: 'owned',
    to: 'deleting',
    effects: ['shutdown', 'delete'],
    why: 'made by the agent and unused too long: deleted',
  },
  {
    from: 'shutdown',
    event: 'idleDelete',
    when: 'owned',
    to: 'deleting',
    effects: ['delete'],
    why: 'made by the agent and unused too long: deleted',
  },
  {
    from: 'deleting',
    event: 'deleted',
    to: 'gone',
    effects: [],
    why: 'deleted',
  },
  {
    from: 'deleting',
    event: 'deleteFailed',
    to: 'awaitingOperator',
    effects: [],
    why: 'the tools would not delete it: an operator looks',
  },
  // --- quarantine ---
  {
    from: 'quarantined',
    event: 'quarantineRetry',
    to: 'retrying',
    effects: ['boot', 'healthCheck'],
    why: 'its backoff ran out: booted and checked again',
  },
  {
    from: 'retrying',
    event: 'retryPassed',
    to: 'ready',
    effects: [],
    why: 'the retry passed: back in the pool, warm',
  },
  {
    from: 'retrying',
    event: 'retryFailed',
    to: 'quarantined',
    effects: ['shutdown', 'scheduleRetry'],
    why: 'the retry failed: tried again after a longer backoff',
  },
  {
    from: 'retrying',
    event: 'retriesExhausted',
    when: 'owned',
    to: 'deleting',
    effects: ['shutdown', 'delete'],
    why: 'retries used up on a device the agent made: deleted (a new one is made when needed)',
  },
  {
    from: 'retrying',
    event: 'retriesExhausted',
    when: 'adopted',
    to: 'awaitingOperator',
    effects: ['shutdown'],
    why: 'retries used up on an adopted device: quarantined until an operator acts',
  },
  {
    from: 'quarantined',
    event: 'unquarantine',
    to: 'shuttingDown',
    effects: ['cancelRetry', 'shutdown'],
    why: 'an operator put it back: shut down, then free for a cold grant',
  },
  {
    from: 'awaitingOperator',
    event: 'unquarantine',
    to: 'shuttingDown',
    effects: ['shutdown'],
    why: 'an operator put it back: shut down, then free for a cold grant',
  },
  // --- gone from the listing ---
  ...(
    ['shutdown', 'ready', 'shuttingDown', 'retrying', 'awaitingOperator', 'deleting'] as const
  ).map((from): DeviceTransition => ({
    from,
    event: 'listedGone',
    to: 'gone',
    effects: [],
    why: 'the tools no longer list it',
  })),
  {
    from: 'quarantined',
    event: 'listedGone',
    to: 'gone',
    effects: ['cancelRetry'],
    why: 'the tools no longer list it',
  },
  {
    from: 'booting',
    event: 'listedGone',
    to: 'gone',
    effects: ['refuseLease'],
    why: 'it vanished while booting: the lease is refused',
  },
  {
    from: 'leased',
    event: 'listedGone',
    to: 'gone',
    effects: ['stopExecs', 'endLease'],
    why: 'it vanished under its lease: the lease is lost',
  },
  {
    from: 'recovering',
    event: 'listedGone',
    to: 'gone',
    effects: ['endLease'],
    why: 'it vanished while recovering: the lease is lost',
  },
  {
    from: 'reclaiming',
    event: 'listedGone',
    to: 'gone',
    effects: ['finishLease'],
    why: 'it vanished while reclaimed: nothing left to reclaim, the Lease let go',
  },
];
