// The device machine: every row of DEVICE_TRANSITIONS taken, every state and event without a row
// refused, the rules the table keeps checked over all of it, then a device's stories.
import { describe, expect, it } from 'vitest';
import { crashBudget } from './crash-budget.js';
import {
  DEVICE_EVENT_TYPES,
  DEVICE_TRANSITIONS,
  LEASE_STATES,
  NEW_DEVICE,
  holds,
  nextDevice,
  viewStateOf,
  type DeviceEffect,
  type DeviceEvent,
  type DeviceEventType,
  type DeviceLife,
  type DeviceLifeState,
  type DeviceTransition,
} from './device-machine.js';

const STATES: readonly DeviceLifeState[] = [
  'new',
  'creating',
  'shutdown',
  'booting',
  'ready',
  'leased',
  'recovering',
  'reclaiming',
  'shuttingDown',
  'quarantined',
  'retrying',
  'awaitingOperator',
  'deleting',
  'gone',
];

/** An event of this type; `booted` where it has one, `lease-new` where it gives a lease. */
function eventOf(type: DeviceEventType, booted = true, owned = true): DeviceEvent {
  switch (type) {
    case 'listed':
      return { type, owned, booted };
    case 'reclaimed':
      return { type, booted };
    case 'leaseResumed':
    case 'make':
    case 'grantWarm':
    case 'grantCold':
      return { type, lease: 'lease-new' };
    case 'leaseEnded':
      return { type, reclaim: 'erase-keep-warm' };
    default:
      return { type };
  }
}

function lifeIn(kind: DeviceLifeState, owned: boolean): DeviceLife {
  return LEASE_STATES.has(kind) ? { kind, owned, lease: 'lease-1' } : { kind, owned };
}

/** Runs the events in order; every one must be taken. Answers the last life and every effect. */
function run(life: DeviceLife, events: readonly DeviceEvent[]) {
  const effects: DeviceEffect[] = [];
  for (const event of events) {
    const step = nextDevice(life, event);
    if ('refused' in step)
      throw new Error(`${event.type} refused while ${life.kind}: ${step.refused}`);
    effects.push(...step.effects);
    life = step.state;
  }
  return { life, effects };
}

const types = (effects: readonly DeviceEffect[]) => effects.map((effect) => effect.type);
const rowsWhere = (test: (row: DeviceTransition) => boolean) => DEVICE_TRANSITIONS.filter(test);

describe('the table', () => {
  it('every row is taken as written, the lease carried into the states that hold one', () => {
    for (const row of DEVICE_TRANSITIONS) {
      let taken = 0;
      for (const owned of [true, false]) {
        for (const booted of [true, false]) {
          const from = lifeIn(row.from, owned);
          const event = eventOf(row.event, booted, owned);
          if (!holds(row.when, from, event)) continue;
          const step = nextDevice(from, event);
          const label = `${row.from} --${row.event}${row.when ? ` [${row.when}]` : ''}--> ${row.to}`;
          expect(step, label).toHaveProperty('state');
          if ('refused' in step) continue;
          expect(step.state.kind, label).toBe(row.to);
          expect(types(step.effects), label).toEqual(row.effects);
          expect(step.why, label).toBe(row.why);
          const lease = 'lease' in event ? event.lease : from.lease;
          expect(step.state.lease, label).toBe(LEASE_STATES.has(row.to) ? lease : undefined);
          for (const effect of step.effects)
            if ('lease' in effect) expect(effect.lease, label).toBe(lease);
          // Whether the agent made it is known from the listing (or the make), and kept after.
          expect(step.state.owned, label).toBe(row.event === 'make' ? true : owned);
          taken++;
        }
      }
      expect(taken, `${row.from} ${row.event} ${row.when ?? ''}`).toBeGreaterThan(0);
    }
  });

  it('every state and event without a row is refused, and never two rows apply at once', () => {
    for (const kind of STATES) {
      for (const type of DEVICE_EVENT_TYPES) {
        for (const owned of [true, false]) {
          for (const booted of [true, false]) {
            const life = lifeIn(kind, owned);
            const event = eventOf(type, booted, owned);
            const applying = rowsWhere(
              (row) => row.from === kind && row.event === type && holds(row.when, life, event),
            );
            expect(applying.length, `${kind} × ${type}`).toBeLessThanOrEqual(1);
            const step = nextDevice(life, event);
            if (applying.length === 0) expect(step, `${kind} × ${type}`).toHaveProperty('refused');
            else expect(step, `${kind} × ${type}`).toHaveProperty('state');
          }
        }
      }
    }
  });

  it('a refusal says what was not taken where', () => {
    expect(
      nextDevice({ kind: 'leased', owned: true, lease: 'l' }, { type: 'grantWarm', lease: 'm' }),
    ).toEqual({ refused: 'grantWarm is not taken while leased' });
    expect(nextDevice({ kind: 'shutdown', owned: false }, { type: 'idleDelete' })).toEqual({
      refused: 'idleDelete is taken while shutdown only when owned',
    });
    // A life that lost its lease (never made by the machine) cannot answer a lease.
    expect(nextDevice({ kind: 'booting', owned: true }, { type: 'booted' })).toHaveProperty(
      'refused',
    );
  });

  it('a device is granted only when ready (warm) or shut down (cold), or made for the lease', () => {
    const intoLease = rowsWhere((row) => !LEASE_STATES.has(row.from) && LEASE_STATES.has(row.to));
    expect(intoLease.map((row) => `${row.from} ${row.event}`).sort()).toEqual([
      'new make',
      'ready grantWarm',
      'ready leaseResumed',
      'shutdown grantCold',
      'shutdown leaseResumed',
    ]);
    expect(rowsWhere((row) => row.effects.includes('grantLease')).map((row) => row.from)).toEqual([
      'ready',
      'booting',
    ]);
  });

  it('idle shutdown and delete start only from ready or shut down', () => {
    const idle = rowsWhere((row) => row.event === 'idleShutdown' || row.event === 'idleDelete');
    expect(new Set(idle.map((row) => row.from))).toEqual(new Set(['ready', 'shutdown']));
  });

  it('only a device the agent made is ever deleted', () => {
    const deleting = rowsWhere((row) => row.effects.includes('delete') || row.to === 'deleting');
    expect(deleting.length).toBeGreaterThan(0);
    for (const row of deleting) expect(row.when, `${row.from} ${row.event}`).toBe('owned');
  });

  it('the lease is lost only where the device can no longer serve it, and the holder told', () => {
    const lost = rowsWhere((row) => row.effects.includes('endLease'));
    expect(lost.map((row) => `${row.from} ${row.event}`).sort()).toEqual([
      'leased crashedTooOften',
      'leased listedGone',
      'recovering bootFailed',
      'recovering listedGone',
    ]);
  });

  it('the view shows each state as the planner counts it', () => {
    expect(Object.fromEntries(STATES.map((kind) => [kind, viewStateOf(kind)]))).toEqual({
      new: undefined,
      creating: 'booting',
      shutdown: 'shutdown',
      booting: 'booting',
      ready: 'ready',
      leased: 'leased',
      recovering: 'leased',
      reclaiming: 'reclaiming',
      shuttingDown: 'reclaiming',
      quarantined: 'quarantined',
      retrying: 'booting',
      awaitingOperator: 'quarantined',
      deleting: 'deleting',
      gone: undefined,
    });
  });
});

describe("a device's stories", () => {
  const MINUTE = 60_000;
  const leased: DeviceLife = { kind: 'leased', owned: true, lease: 'ci-7' };

  it('made, booted, leased, crashed, recovered under the same lease, reclaimed warm', () => {
    let step = run(NEW_DEVICE, [
      { type: 'make', lease: 'ci-7' },
      { type: 'made' },
      { type: 'booted' },
    ]);
    expect(step.life).toEqual({ kind: 'leased', owned: true, lease: 'ci-7' });
    expect(step.effects).toEqual([
      { type: 'make', lease: 'ci-7' },
      { type: 'boot' },
      { type: 'grantLease', lease: 'ci-7' },
    ]);
    step = run(step.life, [{ type: 'crashed' }]);
    expect(step.life).toEqual({ kind: 'recovering', owned: true, lease: 'ci-7' });
    expect(step.effects).toEqual([
      { type: 'stopExecs', lease: 'ci-7' },
      { type: 'tellRecovering', lease: 'ci-7' },
      { type: 'shutdown' },
      { type: 'boot' },
    ]);
    step = run(step.life, [{ type: 'recovered' }]);
    expect(step.life).toEqual(leased);
    expect(step.effects).toEqual([{ type: 'tellRecovered', lease: 'ci-7' }]);
    step = run(step.life, [
      { type: 'leaseEnded', reclaim: 'erase-keep-warm' },
      { type: 'reclaimed', booted: true },
    ]);
    expect(step.life).toEqual({ kind: 'ready', owned: true });
    expect(step.effects).toEqual([
      { type: 'stopExecs', lease: 'ci-7' },
      { type: 'reclaim', policy: 'erase-keep-warm' },
      { type: 'finishLease', lease: 'ci-7' },
    ]);
  });

  it('a third crash within ten minutes ends the lease LEASE_LOST and quarantines the device', () => {
    const T0 = Date.UTC(2025, 0, 1);
    let life = leased;
    let history: number[] = [];
    const effects: DeviceEffect[] = [];
    for (const at of [T0, T0 + 3 * MINUTE, T0 + 7 * MINUTE]) {
      const verdict = crashBudget(history, at);
      history = verdict.history;
      const crashed = run(life, [{ type: verdict.event }]);
      effects.push(...crashed.effects);
      life =
        crashed.life.kind === 'recovering'
          ? run(crashed.life, [{ type: 'recovered' }]).life
          : crashed.life;
      if (verdict.event === 'crashed') expect(life).toEqual(leased);
    }
    expect(life).toEqual({ kind: 'quarantined', owned: true });
    expect(effects.slice(-4)).toEqual([
      { type: 'stopExecs', lease: 'ci-7' },
      { type: 'endLease', lease: 'ci-7', code: 'LEASE_LOST' },
      { type: 'shutdown' },
      { type: 'scheduleRetry' },
    ]);
    // The lease is gone from the device: its end later finds nothing to reclaim here.
    expect(nextDevice(life, { type: 'leaseEnded', reclaim: 'erase' })).toHaveProperty('refused');
  });

  it('a quarantine retry that passes puts the device back warm', () => {
    const bootFailed = run({ kind: 'shutdown', owned: false }, [
      { type: 'grantCold', lease: 'ci-8' },
      { type: 'bootFailed' },
    ]);
    expect(bootFailed.life).toEqual({ kind: 'quarantined', owned: false });
    expect(bootFailed.effects).toContainEqual({
      type: 'refuseLease',
      lease: 'ci-8',
      code: 'NO_CAPACITY',
    });
    const retried = run(bootFailed.life, [{ type: 'quarantineRetry' }, { type: 'retryPassed' }]);
    expect(retried.effects).toEqual([{ type: 'boot' }, { type: 'healthCheck' }]);
    expect(retried.life).toEqual({ kind: 'ready', owned: false });
    // Back in the pool: a warm grant takes it.
    expect(run(retried.life, [{ type: 'grantWarm', lease: 'ci-9' }]).life.kind).toBe('leased');
  });

  it('an adopted device that fails its retries stays quarantined until an operator acts', () => {
    const quarantined: DeviceLife = { kind: 'quarantined', owned: false };
    const failing = run(quarantined, [
      { type: 'quarantineRetry' },
      { type: 'retryFailed' },
      { type: 'quarantineRetry' },
      { type: 'retryFailed' },
      { type: 'quarantineRetry' },
      { type: 'retriesExhausted' },
    ]);
    expect(failing.life).toEqual({ kind: 'awaitingOperator', owned: false });
    expect(types(failing.effects)).not.toContain('delete');
    for (const type of ['quarantineRetry', 'grantCold', 'idleDelete'] as const)
      expect(nextDevice(failing.life, eventOf(type))).toHaveProperty('refused');
    const back = run(failing.life, [{ type: 'unquarantine' }, { type: 'stopped' }]);
    expect(back.life).toEqual({ kind: 'shutdown', owned: false });
    expect(run(back.life, [{ type: 'grantCold', lease: 'ci-10' }]).life.kind).toBe('booting');
  });

  it('a device the agent made that fails its retries is deleted', () => {
    const gone = run({ kind: 'retrying', owned: true }, [
      { type: 'retriesExhausted' },
      { type: 'deleted' },
    ]);
    expect(gone).toEqual({
      life: { kind: 'gone', owned: true },
      effects: [{ type: 'shutdown' }, { type: 'delete' }],
    });
  });

  it('idle: a device the agent made is deleted, an adopted one never', () => {
    const owned = run({ kind: 'ready', owned: true }, [
      { type: 'idleShutdown' },
      { type: 'stopped' },
      { type: 'idleDelete' },
      { type: 'deleted' },
    ]);
    expect(owned.life.kind).toBe('gone');
    expect(types(owned.effects)).toEqual(['shutdown', 'delete']);
    for (const kind of ['ready', 'shutdown'] as const)
      expect(nextDevice({ kind, owned: false }, { type: 'idleDelete' })).toHaveProperty('refused');
    // Listed at start: owned comes from the listing.
    const adopted = run(NEW_DEVICE, [{ type: 'listed', owned: false, booted: false }]).life;
    expect(nextDevice(adopted, { type: 'idleDelete' })).toHaveProperty('refused');
  });

  it('idle shutdown never races a grant: whichever comes first moves the device', () => {
    const ready: DeviceLife = { kind: 'ready', owned: true };
    const granted = run(ready, [{ type: 'grantWarm', lease: 'ci-11' }]).life;
    expect(nextDevice(granted, { type: 'idleShutdown' })).toHaveProperty('refused');
    expect(nextDevice(granted, { type: 'idleDelete' })).toHaveProperty('refused');
    const stopping = run(ready, [{ type: 'idleShutdown' }]).life;
    expect(nextDevice(stopping, { type: 'grantWarm', lease: 'ci-11' })).toHaveProperty('refused');
    expect(nextDevice(stopping, { type: 'grantCold', lease: 'ci-11' })).toHaveProperty('refused');
  });

  it('a lease that ends while its device recovers is reclaimed; a vanished device loses it', () => {
    const recovering = run(leased, [{ type: 'crashed' }]).life;
    const ended = run(recovering, [
      { type: 'leaseEnded', reclaim: 'shutdown' },
      { type: 'reclaimed', booted: false },
    ]);
    expect(ended.life).toEqual({ kind: 'shutdown', owned: true });
    expect(ended.effects).toContainEqual({ type: 'reclaim', policy: 'shutdown' });
    expect(run(leased, [{ type: 'listedGone' }]).effects).toEqual([
      { type: 'stopExecs', lease: 'ci-7' },
      { type: 'endLease', lease: 'ci-7', code: 'LEASE_LOST' },
    ]);
  });

  it('a lease from before a restart is taken back on the device it names', () => {
    for (const booted of [true, false]) {
      const listed = run(NEW_DEVICE, [{ type: 'listed', owned: false, booted }]).life;
      expect(run(listed, [{ type: 'leaseResumed', lease: 'ci-12' }])).toEqual({
        life: { kind: 'leased', owned: false, lease: 'ci-12' },
        effects: [],
      });
    }
    // Not a device another lease holds, nor one the agent is busy with.
    for (const kind of ['leased', 'booting', 'quarantined', 'shuttingDown'] as const)
      expect(nextDevice(lifeIn(kind, true), eventOf('leaseResumed'))).toHaveProperty('refused');
  });
});
