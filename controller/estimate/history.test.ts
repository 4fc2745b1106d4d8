import { describe, expect, it } from 'vitest';
import { GrantHistory, HISTORY_WINDOW_MS } from './history.js';
import { HISTORY_SAMPLES } from './history.js';

function clockAt(start: number) {
  const clock = { at: start, now: () => clock.at };
  return clock;
}

describe('GrantHistory', () => {
  it('keeps the last hour only, per class', () => {
    const clock = clockAt(0);
    const history = new GrantHistory(clock);
    history.record('ios/virtual/iphone 16', 'waitMs', 1000);
    clock.at = HISTORY_WINDOW_MS / 2;
    history.record('ios/virtual/iphone 16', 'waitMs', 2000);
    history.record('ios/virtual/ipad', 'leaseMs', 5000);
    expect(history.of('ios/virtual/iphone 16').waitMs).toEqual([1000, 2000]);
    clock.at = HISTORY_WINDOW_MS + 1;
    expect(history.of('ios/virtual/iphone 16')).toEqual({
      leaseMs: [],
      waitMs: [2000],
      readyMs: [],
    });
    expect(history.of('ios/virtual/ipad').leaseMs).toEqual([5000]);
    expect(history.of('android/virtual/pixel 9').waitMs).toEqual([]);
  });

  it('is bounded: the newest samples kept', () => {
    const history = new GrantHistory(clockAt(0));
    for (let index = 0; index < HISTORY_SAMPLES + 50; index++)
      history.record('c', 'leaseMs', index);
    const kept = history.of('c').leaseMs;
    expect(kept).toHaveLength(HISTORY_SAMPLES);
    expect(kept[0]).toBe(50);
  });
});
