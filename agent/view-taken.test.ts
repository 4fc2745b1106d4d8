// Which view changes are only devices taken (written later, ADR 0029): views built by the agent's
// own builder from its devices, as they are before and after a grant or anything else.
import { describe, expect, it } from 'vitest';
import { aPlannedPhone, aPlannedSimulator } from '../test/fixtures/driver-devices.js';
import { Limits } from './config.js';
import type { PlannedDevice } from './planner.js';
import { buildWorkerStatus } from './view.js';
import { onlyTaken } from './view-taken.js';

const PHONE = '00008110-001A2B3C4D5E';

function view(
  devices: PlannedDevice[],
  overrides: { health?: 'running' | 'unhealthy'; running?: number } = {},
) {
  return buildWorkerStatus({
    health: overrides.health ?? 'running',
    capabilities: [],
    catalog: {
      platforms: ['ios'],
      models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
      runtimes: [{ platform: 'ios', version: '18.4' }],
    },
    devices,
    limits: Limits.parse({ running: overrides.running ?? 4, platforms: { ios: { running: 4 } } }),
    queue: { entries: [], queueDepth: 0, physicalQueueDepth: 0 },
  });
}

const warm = (id: string, state: PlannedDevice['state'] = 'ready') => aPlannedSimulator(id, state);

describe('a view changed only by devices taken', () => {
  it('is warm devices and phones going from ready to leased, with the evictable count that follows', () => {
    const before = view([warm('a'), warm('b'), aPlannedPhone(PHONE)]);
    const after = view([
      warm('a', 'leased'),
      warm('b', 'leased'),
      aPlannedPhone(PHONE, { state: 'leased' }),
    ]);
    expect(after.capacity?.global).toEqual({ limit: 4, running: 2, evictable: 0 });
    expect(onlyTaken(before, after)).toBe(true);
  });

  it('is not a device given back, made, booted or gone', () => {
    const leased = view([warm('a', 'leased'), warm('b')]);
    expect(onlyTaken(leased, view([warm('a'), warm('b')]))).toBe(false);
    expect(onlyTaken(leased, view([warm('a', 'leased'), warm('b'), warm('c', 'booting')]))).toBe(
      false,
    );
    expect(onlyTaken(leased, view([warm('a', 'leased')]))).toBe(false);
    expect(onlyTaken(leased, view([warm('a', 'leased'), warm('b', 'reclaiming')]))).toBe(false);
  });

  it('is not a taking beside any other change: health, a limit, a device state', () => {
    const before = view([warm('a'), warm('b')]);
    const taken = [warm('a', 'leased'), warm('b')];
    expect(onlyTaken(before, view(taken, { health: 'unhealthy' }))).toBe(false);
    expect(onlyTaken(before, view(taken, { running: 3 }))).toBe(false);
    expect(
      onlyTaken(before, view([warm('a', 'leased'), aPlannedSimulator('b', 'quarantined')])),
    ).toBe(false);
  });

  it('is not a view that did not change', () => {
    const same = view([warm('a')]);
    expect(onlyTaken(same, view([warm('a')]))).toBe(false);
  });
});
