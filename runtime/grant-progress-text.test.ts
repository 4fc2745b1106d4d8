import { describe, expect, it } from 'vitest';
import { askedDevice, estimateText, stageText } from './grant-progress-text.js';

describe('grant progress, as people read it', () => {
  it('names the device by the model asked for, else by platform and class', () => {
    expect(askedDevice({ platform: 'ios', model: 'iPhone 16' })).toBe('iPhone 16');
    expect(askedDevice({ platform: 'ios' })).toBe('an iOS phone');
    expect(askedDevice({ platform: 'android', class: 'tablet' })).toBe('an Android tablet');
    // The agent says which model it picked for a request naming none.
    expect(askedDevice({ platform: 'ios' }, { model: 'iPhone 17' })).toBe('iPhone 17');
  });

  it('gives the estimate in seconds, in minutes once long, and nothing without one', () => {
    expect(estimateText({ estimatedSeconds: 40 })).toBe('about 40 s');
    expect(estimateText({ estimatedSeconds: 0 })).toBe('about 0 s');
    expect(estimateText({ estimatedSeconds: 119 })).toBe('about 119 s');
    expect(estimateText({ estimatedSeconds: 150 })).toBe('about 3 min');
    expect(estimateText({})).toBeUndefined();
  });

  it('says the stage, the device when given, and the worker', () => {
    expect(stageText({ stage: 'booting' }, { device: 'iPhone 16', worker: 'worker-a' })).toBe(
      'booting iPhone 16 on worker-a',
    );
    expect(stageText({ stage: 'provisioning' }, { worker: 'worker-a' })).toBe(
      'provisioning on worker-a',
    );
  });
});
