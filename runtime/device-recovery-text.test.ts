import { describe, expect, it } from 'vitest';
import { recoveredText, recoveringText, recoveryEstimateText } from './device-recovery-text.js';

const device = { name: 'iPhone 17', id: 'A1B2' };

describe('a device recovery, as people read it', () => {
  it('says what crashed, why, and when it should be back', () => {
    const recovery = { cause: 'shut down', crashes: 1, crashBudget: 3, estimatedSeconds: 40 };
    expect(recoveringText(recovery, device)).toBe(
      'device iPhone 17 (A1B2) crashed (shut down): booting it again, back in about 40 s',
    );
    expect(recoveringText({ ...recovery, estimatedSeconds: undefined }, undefined)).toBe(
      'the device crashed (shut down): booting it again',
    );
  });

  it('from a second crash on, says how many more the lease can take', () => {
    const recovery = { cause: 'emulator process exited', crashes: 2, crashBudget: 3 };
    expect(recoveringText(recovery, device)).toBe(
      'device iPhone 17 (A1B2) crashed (emulator process exited): booting it again (crash 2 of 3: the 3rd ends the lease)',
    );
  });

  it('says the device is back, and the short line the console shows', () => {
    expect(recoveredText(device, 'shut down')).toBe(
      'device iPhone 17 (A1B2) is back after its crash (shut down)',
    );
    expect(recoveredText(device)).toBe('device iPhone 17 (A1B2) is back after its crash');
    expect(recoveryEstimateText({ estimatedSeconds: 150 })).toBe('back in about 3 min');
    expect(recoveryEstimateText({})).toBe('booting again');
  });
});
