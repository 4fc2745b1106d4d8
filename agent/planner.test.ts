import { describe, expect, it } from 'vitest';
import { noPhysicalMatch, type Catalog, type DeviceSpec } from '../api/index.js';
import {
  aPlannedEmulator,
  aPlannedPhone,
  aPlannedSimulator,
} from '../test/fixtures/driver-devices.js';
import { Limits, type AgentConfigInput } from './config.js';
import {
  measureCapacity,
  plan,
  waitingReasonFor,
  type PlannedDevice,
  type PlanInput,
} from './planner.js';

const catalog: Catalog = {
  platforms: ['ios', 'android'],
  models: [
    { name: 'iPhone 16', platform: 'ios', class: 'phone' },
    { name: 'iPhone 15', platform: 'ios', class: 'phone' },
    { name: 'iPad Pro', platform: 'ios', class: 'tablet' },
    { name: 'Pixel 7', platform: 'android', class: 'phone' },
  ],
  runtimes: [
    { platform: 'ios', version: '18.4' },
    { platform: 'ios', version: '17.5' },
    { platform: 'android', version: '34' },
  ],
};

/** An iOS simulator of `model` (a tablet when it is an iPad), named after its model. */
function simulator(
  id: string,
  model: string,
  state: PlannedDevice['state'],
  extra: Partial<PlannedDevice> = {},
): PlannedDevice {
  const kind = model.startsWith('iPad') ? 'tablet' : 'phone';
  return aPlannedSimulator(id, state, { name: model, model, class: kind, ...extra });
}

function limits(input: AgentConfigInput['limits'] = {}): Limits {
  return Limits.parse(input);
}

function input(
  spec: DeviceSpec,
  devices: PlannedDevice[],
  overrides: Partial<PlanInput> = {},
): PlanInput {
  return {
    spec,
    catalog,
    capabilities: [{ name: 'camera', available: true }],
    devices,
    limits: limits({ running: 4 }),
    ...overrides,
  };
}

const iphone16: DeviceSpec = { platform: 'ios', model: 'iPhone 16' };

describe('planning a virtual lease', () => {
  it('grants a ready warm simulator of the model', () => {
    const result = plan(
      input(iphone16, [
        simulator('a', 'iPhone 16', 'ready'),
        simulator('b', 'iPhone 16', 'shutdown'),
      ]),
    );
    expect(result).toMatchObject({ kind: 'warm', device: { id: 'a' } });
  });

  it('cold-boots a shut-down simulator when slots and RAM allow', () => {
    const result = plan(
      input(iphone16, [
        simulator('b', 'iPhone 16', 'shutdown'),
        simulator('c', 'iPhone 16', 'leased'),
      ]),
    );
    expect(result).toEqual({
      kind: 'cold',
      device: simulator('b', 'iPhone 16', 'shutdown'),
      evict: [],
    });
  });

  it('never grants a leased, booting or reclaiming simulator', () => {
    const result = plan(
      input(iphone16, [
        simulator('a', 'iPhone 16', 'leased'),
        simulator('b', 'iPhone 16', 'booting'),
        simulator('c', 'iPhone 16', 'reclaiming'),
      ]),
    );
    expect(result).toMatchObject({ kind: 'refuse', refusal: { code: 'NO_CAPACITY' } });
    expect(result.kind === 'refuse' && result.refusal.capacityReason).toBeFalsy();
  });

  it('does not take a physical device for a virtual request', () => {
    const result = plan(
      input({ platform: 'ios', model: 'iPhone 15 Pro' }, [aPlannedPhone('p')], {
        catalog: {
          ...catalog,
          models: [...catalog.models, { name: 'iPhone 15 Pro', platform: 'ios', class: 'phone' }],
        },
      }),
    );
    expect(result).toMatchObject({ kind: 'refuse', refusal: { code: 'RUNTIME_MISSING' } });
  });
});

describe('capacity reasons', () => {
  it('refuses at the platform running limit', () => {
    const result = plan(
      input(
        iphone16,
        [simulator('a', 'iPhone 15', 'leased'), simulator('b', 'iPhone 16', 'shutdown')],
        {
          limits: limits({ running: 4, platforms: { ios: { running: 1 } } }),
        },
      ),
    );
    expect(result).toMatchObject({
      kind: 'refuse',
      refusal: {
        code: 'NO_CAPACITY',
        capacityReason: 'platform-running-limit',
        message: 'iOS is at its running limit on this host',
      },
    });
  });

  it('refuses at the global running limit when the platform has room', () => {
    const result = plan(
      input(iphone16, [aPlannedEmulator('e', 'leased'), simulator('b', 'iPhone 16', 'shutdown')], {
        limits: limits({ running: 1, platforms: { ios: { running: 2 } } }),
      }),
    );
    expect(result).toMatchObject({
      kind: 'refuse',
      refusal: { code: 'NO_CAPACITY', capacityReason: 'global-running-limit' },
    });
  });

  it('refuses at the RAM budget, counting the per-model cost', () => {
    const result = plan(
      input(
        { platform: 'ios', model: 'iPad Pro' },
        [simulator('a', 'iPhone 15', 'leased'), simulator('t', 'iPad Pro', 'shutdown')],
        {
          limits: limits({
            running: 4,
            platforms: { ios: { running: 4, ramBudgetMb: 4096, ramPerDeviceMb: 2048 } },
            modelRamMb: { 'ipad pro': 3072 },
          }),
        },
      ),
    );
    expect(result).toMatchObject({
      kind: 'refuse',
      refusal: { code: 'NO_CAPACITY', capacityReason: 'ram-budget' },
    });
  });

  it('names the platform limit first when the global limit is also reached', () => {
    const result = plan(
      input(
        iphone16,
        [simulator('a', 'iPhone 15', 'leased'), simulator('b', 'iPhone 16', 'shutdown')],
        {
          limits: limits({ running: 1, platforms: { ios: { running: 1 } } }),
        },
      ),
    );
    expect(result).toMatchObject({ refusal: { capacityReason: 'platform-running-limit' } });
  });

  it('names the limit when every device of the model is running and no other could boot', () => {
    const result = plan(
      input(iphone16, [simulator('a', 'iPhone 16', 'leased')], {
        limits: limits({ running: 4, platforms: { ios: { running: 1 } } }),
      }),
    );
    expect(result).toMatchObject({
      refusal: { code: 'NO_CAPACITY', capacityReason: 'platform-running-limit' },
    });
  });

  it('gives the waiting reason a local queue entry shows', () => {
    expect(
      waitingReasonFor(
        { code: 'NO_CAPACITY', capacityReason: 'ram-budget', message: '' },
        iphone16,
      ),
    ).toEqual({
      reason: 'full',
      capacityReason: 'ram-budget',
    });
    expect(
      waitingReasonFor({ code: 'NO_CAPACITY', message: '' }, { platform: 'ios', physical: true }),
    ).toEqual({
      reason: 'no-free-physical',
    });
  });
});

describe('eviction', () => {
  it('shuts down an idle warm simulator of another model to free the platform slot', () => {
    const warm15 = simulator('w', 'iPhone 15', 'ready');
    const result = plan(
      input(iphone16, [warm15, simulator('b', 'iPhone 16', 'shutdown')], {
        limits: limits({ running: 4, platforms: { ios: { running: 1 } } }),
      }),
    );
    expect(result).toMatchObject({ kind: 'cold', device: { id: 'b' }, evict: [warm15] });
  });

  it('evicts the simulator ready the longest first, and only as many as needed', () => {
    const older = simulator('older', 'iPhone 15', 'ready', { readySinceMs: 1000 });
    const newer = simulator('newer', 'iPhone 15', 'ready', { os: '17.5', readySinceMs: 5000 });
    const result = plan(
      input(iphone16, [newer, older, simulator('b', 'iPhone 16', 'shutdown')], {
        limits: limits({ running: 4, platforms: { ios: { running: 2 } } }),
      }),
    );
    expect(result).toMatchObject({ kind: 'cold', evict: [older] });
  });

  it('evicts for RAM: as many same-platform warm ones as the new one needs', () => {
    const warmA = simulator('wa', 'iPhone 15', 'ready', { readySinceMs: 1 });
    const warmB = simulator('wb', 'iPhone 15', 'ready', { os: '17.5', readySinceMs: 2 });
    const result = plan(
      input(
        { platform: 'ios', model: 'iPad Pro' },
        [warmA, warmB, simulator('t', 'iPad Pro', 'shutdown')],
        {
          limits: limits({
            running: 8,
            platforms: { ios: { running: 8, ramBudgetMb: 5000, ramPerDeviceMb: 2000 } },
            modelRamMb: { 'iPad Pro': 3000 },
          }),
        },
      ),
    );
    expect(result).toMatchObject({ kind: 'cold', device: { id: 't' }, evict: [warmA] });
  });

  it('evicts a warm emulator to free a global slot for a simulator', () => {
    const warmEmulator = aPlannedEmulator('e', 'ready');
    const result = plan(
      input(iphone16, [warmEmulator, simulator('b', 'iPhone 16', 'shutdown')], {
        limits: limits({ running: 1, platforms: { ios: { running: 1 } } }),
      }),
    );
    expect(result).toMatchObject({ kind: 'cold', evict: [warmEmulator] });
  });

  it('does not evict another platform to free a platform slot', () => {
    const result = plan(
      input(
        iphone16,
        [
          aPlannedEmulator('e', 'ready'),
          simulator('a', 'iPhone 15', 'leased'),
          simulator('b', 'iPhone 16', 'shutdown'),
        ],
        {
          limits: limits({ running: 4, platforms: { ios: { running: 1 } } }),
        },
      ),
    );
    expect(result).toMatchObject({ refusal: { capacityReason: 'platform-running-limit' } });
  });
});

describe('requests this host can never serve', () => {
  it('answers NO_DRIVER for a platform it has no driver for', () => {
    const result = plan(
      input({ platform: 'android' }, [], { catalog: { ...catalog, platforms: ['ios'] } }),
    );
    expect(result).toMatchObject({
      refusal: { code: 'NO_DRIVER', message: 'this host has no driver for Android' },
    });
  });

  it('answers UNKNOWN_MODEL for a model it does not offer', () => {
    expect(plan(input({ platform: 'ios', model: 'iPhone 3G' }, []))).toMatchObject({
      refusal: { code: 'UNKNOWN_MODEL' },
    });
  });

  it('answers RUNTIME_MISSING for an OS it has not installed', () => {
    expect(
      plan(input({ ...iphone16, os: '16.4' }, [simulator('a', 'iPhone 16', 'ready')])),
    ).toMatchObject({
      refusal: { code: 'RUNTIME_MISSING' },
    });
  });

  it('answers RUNTIME_MISSING when the model and the runtime exist but no device has both', () => {
    expect(
      plan(input({ ...iphone16, os: '17.5' }, [simulator('a', 'iPhone 16', 'ready')])),
    ).toMatchObject({
      refusal: { code: 'RUNTIME_MISSING' },
    });
  });

  it('answers CAPABILITY_MISSING for a capability it lacks, virtual or physical', () => {
    expect(
      plan(input({ ...iphone16, requires: ['gpu'] }, [simulator('a', 'iPhone 16', 'ready')])),
    ).toMatchObject({
      refusal: { code: 'CAPABILITY_MISSING' },
    });
    expect(
      plan(input({ platform: 'ios', physical: true, requires: ['gpu'] }, [aPlannedPhone('p')])),
    ).toMatchObject({
      refusal: { code: 'CAPABILITY_MISSING' },
    });
  });
});

describe('planning a physical lease', () => {
  const spec: DeviceSpec = { platform: 'ios', physical: true, os: '>=18 <19' };

  it('offers the pickable matches, the ones read present first', () => {
    const result = plan(
      input(spec, [
        aPlannedPhone('b-unread'),
        aPlannedPhone('a-present', { presence: { present: true } }),
        simulator('s', 'iPhone 16', 'ready'),
      ]),
    );
    expect(result.kind === 'physical' && result.candidates.map((device) => device.id)).toEqual([
      'a-present',
      'b-unread',
    ]);
  });

  it('answers UNKNOWN_MODEL with the shared message when nothing enrolled can match', () => {
    const tablet: DeviceSpec = { platform: 'ios', physical: true, class: 'tablet' };
    const { message, details } = noPhysicalMatch(tablet);
    expect(plan(input(tablet, [aPlannedPhone('p')]))).toEqual({
      kind: 'refuse',
      refusal: { code: 'UNKNOWN_MODEL', message, details },
    });
  });

  it('answers NO_CAPACITY device-not-present when the only ready match was read not present', () => {
    const result = plan(
      input(spec, [aPlannedPhone('p', { presence: { present: false, reason: 'locked' } })]),
    );
    expect(result).toMatchObject({
      refusal: { code: 'NO_CAPACITY', capacityReason: 'device-not-present' },
    });
  });

  it('answers plain NO_CAPACITY when every match is leased or absent', () => {
    const result = plan(
      input(spec, [
        aPlannedPhone('p', { state: 'leased' }),
        aPlannedPhone('q', { state: 'absent' }),
      ]),
    );
    expect(result).toMatchObject({ refusal: { code: 'NO_CAPACITY' } });
    expect(result.kind === 'refuse' && result.refusal.capacityReason).toBeUndefined();
  });

  it('counts a deleted device as not enrolled', () => {
    expect(plan(input(spec, [aPlannedPhone('p', { state: 'deleted' })]))).toMatchObject({
      refusal: { code: 'UNKNOWN_MODEL' },
    });
  });
});

describe('fairness with the local queue', () => {
  it('refuses a fleet lease while a local request for the same platform waits', () => {
    const result = plan(
      input(iphone16, [simulator('a', 'iPhone 16', 'ready')], {
        localWaiting: [{ platform: 'ios' }],
      }),
    );
    expect(result).toMatchObject({ refusal: { code: 'NO_CAPACITY' } });
  });

  it('lets a fleet lease for another platform through', () => {
    const result = plan(
      input(iphone16, [simulator('a', 'iPhone 16', 'ready')], {
        localWaiting: [{ platform: 'android' }],
      }),
    );
    expect(result.kind).toBe('warm');
  });

  it('holds a physical device a waiting local request could take', () => {
    const spec: DeviceSpec = { platform: 'ios', physical: true };
    const held = plan(
      input(spec, [aPlannedPhone('p')], { localWaiting: [{ platform: 'ios', physical: true }] }),
    );
    expect(held).toMatchObject({ refusal: { code: 'NO_CAPACITY' } });
    const other = plan(
      input(spec, [aPlannedPhone('p')], {
        localWaiting: [{ platform: 'ios', physical: true, class: 'tablet' }],
      }),
    );
    expect(other.kind).toBe('physical');
  });

  it('still answers a request it can never serve with its own code', () => {
    const result = plan(
      input({ platform: 'ios', model: 'iPhone 3G' }, [], { localWaiting: [{ platform: 'ios' }] }),
    );
    expect(result).toMatchObject({ refusal: { code: 'UNKNOWN_MODEL' } });
  });
});

describe('the capacity the view reports', () => {
  it('counts running and evictable devices, and the RAM budget after evicting idle ones', () => {
    const devices = [
      simulator('leased', 'iPhone 16', 'leased'),
      simulator('warm', 'iPhone 15', 'ready'),
      simulator('off', 'iPhone 16', 'shutdown'),
      aPlannedEmulator('e', 'booting'),
      aPlannedPhone('p'),
    ];
    const capacity = measureCapacity(
      devices,
      ['ios', 'android'],
      limits({
        running: 6,
        platforms: {
          ios: { running: 3, ramBudgetMb: 4096, ramPerDeviceMb: 2048 },
          android: { running: 2, ramBudgetMb: 4096, ramPerDeviceMb: 3072 },
        },
      }),
    );
    expect(capacity).toEqual({
      global: { limit: 6, running: 3, evictable: 1 },
      platforms: {
        ios: { limit: 3, running: 2, evictable: 1, atRamBudget: false },
        android: { limit: 2, running: 1, evictable: 0, atRamBudget: true },
      },
    });
  });
});
