import { describe, expect, it } from 'vitest';
import { aWorker, health, requests } from '../../../test/fixtures/routing.js';
import { healthy } from './healthy.js';

describe('healthy', () => {
  it.each(['starting', 'unhealthy'] as const)('drops a %s worker with unhealthy', (state) => {
    const worker = aWorker('wrk-a', health(state));
    expect(healthy.check(worker, requests.iphone)).toEqual({ reason: 'unhealthy' });
    expect(healthy.check(worker, requests.physicalIphone)).toEqual({ reason: 'unhealthy' });
  });

  it('keeps a running worker', () => {
    expect(healthy.check(aWorker('wrk-a'), requests.iphone)).toBeUndefined();
  });
});
