import { describe, expect, it } from 'vitest';
import { deriveLimits } from './machine-limits.js';

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
