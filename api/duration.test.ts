import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from './duration.js';

describe('durations', () => {
  it.each([
    ['90s', 90],
    ['5m', 300],
    ['1h', 3600],
    ['1h30m', 5400],
    ['2m5s', 125],
    ['300', 300],
    ['0', 0],
    [' 45s ', 45],
  ])('%j is %d seconds', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });

  it.each(['', 's', '5x', '1.5h', '-5s', '5 m', 'h1', '1d'])('%j is not a duration', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('formats the shortest form that reads back', () => {
    for (const seconds of [0, 59, 60, 90, 3600, 5400, 86_399]) {
      expect(parseDuration(formatDuration(seconds))).toBe(seconds);
    }
    expect(formatDuration(5400)).toBe('1h30m');
  });
});
