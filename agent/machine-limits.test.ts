import { describe, expect, it } from 'vitest';
import { Limits } from './config.js';
import { configuredLimits, deriveLimits } from './machine-limits.js';
import { ramCostMb } from './planner.js';

const GiB = 1024;

describe('deriveLimits', () => {
  it.each([
    // machine, platforms, running, iOS/Android budget
    ['Mac mini M2 Pro, 10 cores, 32 GiB', 10, 32 * GiB, ['ios'], 5, 24 * GiB],
    ['Mac mini M1, 8 cores, 16 GiB', 8, 16 * GiB, ['ios'], 4, 12 * GiB],
    ['MacBook Air, 8 cores, 8 GiB', 8, 8 * GiB, ['ios'], 2, 4 * GiB],
    ['Mac Studio, 24 cores, 128 GiB', 24, 128 * GiB, ['ios'], 12, 96 * GiB],
    ['Linux CI runner, 2 cores, 7 GiB', 2, 7 * GiB, ['android'], 1, 3 * GiB],
    ['Linux server, 64 cores, 256 GiB', 64, 256 * GiB, ['android'], 32, 192 * GiB],
    ['Linux laptop, 16 cores, 32 GiB', 16, 32 * GiB, ['android'], 8, 24 * GiB],
  ] as const)('%s', (_name, cores, memoryMb, platforms, running, budget) => {
    const { limits, basis } = deriveLimits({ cores, memoryMb }, platforms);
    expect(limits.running).toBe(running);
    const platform = limits.platforms[platforms[0]];
    expect(platform).toMatchObject({ running, ramBudgetMb: budget });
    expect(basis).toBe(
      `derived from ${cores} cores, ${memoryMb / GiB} GiB: ${running} running, ${budget / GiB} GiB for devices`,
    );
  });

  it('shares one budget between both platforms, counted at the costlier device', () => {
    const { limits } = deriveLimits({ cores: 16, memoryMb: 32 * GiB }, ['ios', 'android']);
    // 24 GiB for devices: 12 simulators or 8 emulators by RAM, 8 by cores.
    expect(limits.platforms.ios).toMatchObject({ running: 8, ramPerDeviceMb: 2048 });
    expect(limits.platforms.android).toMatchObject({ running: 8, ramPerDeviceMb: 3072 });
    expect(limits.running).toBe(8);
  });

  it('lets one device run on a machine smaller than what it keeps for itself', () => {
    const { limits, basis } = deriveLimits({ cores: 1, memoryMb: 3 * GiB }, ['ios']);
    expect(limits.running).toBe(1);
    expect(limits.platforms.ios).toMatchObject({ running: 1, ramBudgetMb: 2048 });
    expect(basis).toBe('derived from 1 core, 3 GiB: 1 running, 0 GiB for devices');
  });
});

describe('RAM per model: the config, then what was measured, then the default', () => {
  const iphone17 = { platform: 'ios', model: 'iPhone 17', mb: 2150, samples: 5 } as const;
  const pixel8 = { platform: 'android', model: 'Pixel 8', mb: 3481, samples: 1 } as const;
  const cost = (limits: Limits, model: string, platform: 'ios' | 'android' = 'ios') =>
    ramCostMb({ model, platform }, limits);

  it('derived limits cost a measured model its median, others the default, and say so', () => {
    const { limits, basis } = deriveLimits(
      { cores: 10, memoryMb: 32 * GiB },
      ['ios', 'android'],
      [iphone17, pixel8],
    );
    expect(cost(limits, 'iPhone 17')).toBe(2150);
    expect(cost(limits, 'IPHONE 17')).toBe(2150);
    expect(cost(limits, 'iPad Pro')).toBe(2048);
    expect(cost(limits, 'Pixel 8', 'android')).toBe(3481);
    expect(cost(limits, 'Pixel 9', 'android')).toBe(3072);
    expect(basis).toBe(
      'derived from 10 cores, 32 GiB: 5 running, 24 GiB for devices; RAM per device: ' +
        'iPhone 17 2.1 GiB measured (median of 5), Pixel 8 3.4 GiB measured (the last one)',
    );
  });

  it('lets more run where a measured model is cheaper than the default, never fewer', () => {
    // MacBook Air, 8 GiB: 4 GiB for devices, 2 simulators at the default 2 GiB.
    const air = { cores: 8, memoryMb: 8 * GiB };
    expect(deriveLimits(air, ['ios']).limits.running).toBe(2);
    const small = { ...iphone17, mb: 1300 };
    expect(deriveLimits(air, ['ios'], [small]).limits).toMatchObject({
      running: 3,
      platforms: { ios: { running: 3, ramBudgetMb: 4 * GiB, ramPerDeviceMb: 2048 } },
    });
    const big = { ...iphone17, mb: 3000 };
    expect(deriveLimits(air, ['ios'], [big]).limits.running).toBe(2);
  });

  it("keeps the config's modelRamMb over a measurement, in any case", () => {
    const config = Limits.parse({
      running: 4,
      platforms: { ios: { running: 4, ramBudgetMb: 8192, ramPerDeviceMb: 1800 } },
      modelRamMb: { 'iphone 17': 2500 },
    });
    const measuredSe = { ...iphone17, model: 'iPhone SE (3rd generation)', mb: 1700 };
    const { limits, basis } = configuredLimits(config, [iphone17, measuredSe]);
    expect(cost(limits, 'iPhone 17')).toBe(2500);
    expect(cost(limits, 'iPhone SE (3rd generation)')).toBe(1700);
    expect(cost(limits, 'iPad Pro')).toBe(1800);
    expect(limits.running).toBe(4);
    expect(basis).toBe(
      'set in the agent config; RAM per device: iPhone SE (3rd generation) 1.7 GiB measured (median of 5)',
    );
    expect(config.modelRamMb).toEqual({ 'iphone 17': 2500 });
    expect(configuredLimits(config).basis).toBe('set in the agent config');
  });

  it('says as many measured models as fit in the Worker field (256 characters)', () => {
    const many = Array.from({ length: 12 }, (_, index) => ({
      ...iphone17,
      model: `iPhone 17 Pro Max variant ${index}`,
    }));
    const { limits, basis } = deriveLimits({ cores: 10, memoryMb: 32 * GiB }, ['ios'], many);
    expect(basis.length).toBeLessThanOrEqual(256);
    expect(basis).toMatch(/iPhone 17 Pro Max variant 0 2\.1 GiB measured \(median of 5\)/);
    expect(basis).toMatch(/ GiB measured \(median of 5\), \+10 more measured$/);
    expect(Object.keys(limits.modelRamMb)).toHaveLength(12);
  });
});
