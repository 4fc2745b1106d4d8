// The crash budget on an injected clock value: three crashes within ten minutes end the lease.
import { describe, expect, it } from 'vitest';
import { crashBudget } from './crash-budget.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2025, 0, 1);

describe('crashBudget', () => {
  it('the first two crashes are recovered, the third within ten minutes is too often', () => {
    const first = crashBudget([], T0);
    expect(first).toEqual({ event: 'crashed', history: [T0] });
    const second = crashBudget(first.history, T0 + 4 * MINUTE);
    expect(second.event).toBe('crashed');
    const third = crashBudget(second.history, T0 + 9 * MINUTE);
    expect(third).toEqual({
      event: 'crashedTooOften',
      history: [T0, T0 + 4 * MINUTE, T0 + 9 * MINUTE],
    });
  });

  it('crashes spread wider than the window never spend the budget', () => {
    let history: number[] = [];
    for (let crash = 0; crash < 10; crash++) {
      const verdict = crashBudget(history, T0 + crash * 6 * MINUTE);
      expect(verdict.event).toBe('crashed');
      history = verdict.history;
    }
    // Only the crashes of the last ten minutes are kept.
    expect(history).toEqual([T0 + 48 * MINUTE, T0 + 54 * MINUTE]);
  });

  it('a crash exactly ten minutes before is outside the window', () => {
    const verdict = crashBudget([T0, T0 + MINUTE], T0 + 10 * MINUTE);
    expect(verdict).toEqual({ event: 'crashed', history: [T0 + MINUTE, T0 + 10 * MINUTE] });
    expect(crashBudget([T0 + 1, T0 + MINUTE], T0 + 10 * MINUTE).event).toBe('crashedTooOften');
  });

  it('times after now (a clock stepped back) are dropped', () => {
    expect(crashBudget([T0 + 5 * MINUTE, T0 + 6 * MINUTE], T0)).toEqual({
      event: 'crashed',
      history: [T0],
    });
  });

  it('takes its own limit and window', () => {
    const rule = { limit: 2, windowMs: MINUTE };
    expect(crashBudget([T0], T0 + 30_000, rule).event).toBe('crashedTooOften');
    expect(crashBudget([T0], T0 + MINUTE, rule).event).toBe('crashed');
  });
});
