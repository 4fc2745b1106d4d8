import { describe, expect, it } from 'vitest';
import { DEFAULT_STAGE_MS, StageTimings } from './stage-timings.js';

const iphone = { platform: 'ios' as const, model: 'iPhone 16', os: '18.4' };

describe('StageTimings', () => {
  it('says it uses a default before anything was measured', () => {
    const timings = new StageTimings();
    expect(timings.estimate('booting', iphone)).toEqual({
      ms: DEFAULT_STAGE_MS.booting.ios,
      basis: 'default',
    });
  });

  it('takes the median of what was measured for the same model and OS', () => {
    const timings = new StageTimings();
    for (const ms of [20_000, 90_000, 22_000]) timings.record('booting', iphone, ms);
    expect(timings.estimate('booting', iphone)).toEqual({
      ms: 22_000,
      basis: 'median of 3 on this host',
    });
    // Another OS of the same model has its own figures.
    expect(timings.estimate('booting', { ...iphone, os: '17.5' }).basis).toBe('default');
    // The model's case does not matter; the stage does.
    expect(timings.estimate('booting', { ...iphone, model: 'IPHONE 16' }).ms).toBe(22_000);
    expect(timings.estimate('provisioning', iphone).basis).toBe('default');
  });

  it("keeps the last nine, so the host's present speed wins", () => {
    const timings = new StageTimings();
    for (let i = 0; i < 9; i++) timings.record('booting', iphone, 100_000);
    for (let i = 0; i < 5; i++) timings.record('booting', iphone, 10_000);
    expect(timings.estimate('booting', iphone).ms).toBe(10_000);
  });

  it('comes back from its record, dropping what is not a duration', () => {
    const first = new StageTimings();
    first.record('provisioning', iphone, 1500);
    const second = new StageTimings({ ...first.toRecord(), 'booting/ios/x/1': [-1, Number.NaN] });
    expect(second.estimate('provisioning', iphone)).toEqual({
      ms: 1500,
      basis: 'the last one on this host',
    });
    expect(second.toRecord()).toEqual(first.toRecord());
  });
});
