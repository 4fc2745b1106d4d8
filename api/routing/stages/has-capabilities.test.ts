import { describe, expect, it } from 'vitest';
import {
  aWorker,
  capabilities,
  requests,
  unavailableCapability,
} from '../../../test/fixtures/routing.js';
import { hasCapabilities } from './has-capabilities.js';

describe('has-capabilities', () => {
  it.each([
    {
      story: 'a worker that does not list a required capability',
      worker: aWorker('wrk-a', capabilities('camera')),
    },
    {
      story: 'a worker that lists a required capability as unavailable',
      worker: aWorker('wrk-a', capabilities('camera'), unavailableCapability('nfc')),
    },
  ])('drops $story with capability-missing', ({ worker }) => {
    const request = { ...requests.iphone, requires: ['camera', 'nfc'] };
    expect(hasCapabilities.check(worker, request)).toEqual({ reason: 'capability-missing' });
  });

  it.each([
    { story: 'a worker with every required capability available', requires: ['camera', 'nfc'] },
    { story: 'any worker when nothing is required', requires: undefined },
    { story: 'any worker when the requirement list is empty', requires: [] },
  ])('keeps $story', ({ requires }) => {
    const worker = aWorker('wrk-a', capabilities('nfc', 'camera'));
    expect(hasCapabilities.check(worker, { ...requests.iphone, requires })).toBeUndefined();
  });
});
