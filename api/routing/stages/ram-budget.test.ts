import { describe, expect, it } from 'vitest';
import { aWorker, atRamBudget, requests } from '../../../test/fixtures/routing.js';
import { ramBudget } from './ram-budget.js';

describe('ram-budget', () => {
  it('scores 0 a worker at its RAM budget for the platform, with full + ram-budget', () => {
    const worker = aWorker('wrk-a', atRamBudget('ios'));
    expect(ramBudget.score(worker, requests.iphone)).toBe(0);
    expect(ramBudget.zeroReason?.(worker, requests.iphone)).toEqual({
      reason: 'full',
      capacityReason: 'ram-budget',
    });
  });

  it.each([
    { story: 'below its RAM budget', worker: aWorker('wrk-a') },
    {
      story: 'at its RAM budget only for another platform',
      worker: aWorker('wrk-a', atRamBudget('android')),
    },
  ])('scores 1 a worker $story, and says nothing against it', ({ worker }) => {
    expect(ramBudget.score(worker, requests.iphone)).toBe(1);
    expect(ramBudget.zeroReason?.(worker, requests.iphone)).toBeUndefined();
  });
});
