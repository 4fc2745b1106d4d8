import { describe, expect, it } from 'vitest';
import {
  aWorker,
  devices,
  IPAD,
  IPHONE,
  IPHONE_PRO,
  physicalDevice,
  requests,
  simulator,
} from '../../../test/fixtures/routing.js';
import { warmHit } from './warm-hit.js';

describe('warm-hit, virtual requests', () => {
  it.each([
    {
      story: 'a ready simulator of the model',
      request: requests.iphone,
      device: simulator({ model: IPHONE }),
    },
    {
      story: 'a ready simulator of the model named in another case',
      request: { platform: 'ios', model: 'iphone 16' } as const,
      device: simulator({ model: IPHONE }),
    },
    {
      story: 'a ready simulator on an OS in the range',
      request: { ...requests.iphone, os: '>=18 <19' },
      device: simulator({ model: IPHONE }),
    },
    {
      story: 'a ready tablet simulator, for any tablet',
      request: requests.anyIosTablet,
      device: simulator({ model: IPAD }),
    },
  ])('scores 1 for $story', ({ request, device }) => {
    const worker = aWorker('wrk-a', devices(device));
    expect(warmHit.score(worker, request)).toBe(1);
    expect(warmHit.zeroReason?.(worker, request)).toBeUndefined();
  });

  it.each([
    { story: 'no device', worker: aWorker('wrk-a') },
    {
      story: 'a leased simulator of the model',
      worker: aWorker('wrk-a', devices(simulator({ model: IPHONE, state: 'leased' }))),
    },
    {
      story: 'a booting simulator of the model',
      worker: aWorker('wrk-a', devices(simulator({ model: IPHONE, state: 'booting' }))),
    },
    {
      story: 'a ready simulator of another model',
      worker: aWorker('wrk-a', devices(simulator({ model: IPHONE_PRO }))),
    },
    {
      story: 'a ready simulator on another OS',
      worker: aWorker('wrk-a', devices(simulator({ model: IPHONE, os: '17.5' }))),
      request: requests.iphoneOn18,
    },
    {
      story: 'a ready physical device of the model',
      worker: aWorker('wrk-a', devices(physicalDevice({ model: IPHONE }))),
    },
  ])('scores 0, and says nothing against it, for $story', ({ worker, request }) => {
    // A virtual request can still boot a cold simulator there.
    expect(warmHit.score(worker, request ?? requests.iphone)).toBe(0);
    expect(warmHit.zeroReason?.(worker, request ?? requests.iphone)).toBeUndefined();
  });
});

describe('warm-hit, physical requests', () => {
  it.each([
    {
      story: 'present at its last read',
      device: physicalDevice({ model: IPHONE, presence: { present: true } }),
    },
    { story: 'not read yet', device: physicalDevice({ model: IPHONE }) },
  ])('scores 1 for a ready enrolled match $story', ({ device }) => {
    const worker = aWorker('wrk-a', devices(device));
    expect(warmHit.score(worker, requests.physicalIphone)).toBe(1);
    expect(warmHit.zeroReason?.(worker, requests.physicalIphone)).toBeUndefined();
  });

  it.each([
    { story: 'no device at all', device: undefined },
    { story: 'a ready simulator of the model', device: simulator({ model: IPHONE }) },
    ...(['leased', 'reclaiming', 'absent', 'quarantined', 'booting'] as const).map((state) => ({
      story: `its match ${state}`,
      device: physicalDevice({ model: IPHONE, state }),
    })),
    ...(['locked', 'untrusted', 'not-present'] as const).map((reason) => ({
      story: `its ready match last read not present (${reason})`,
      device: physicalDevice({ model: IPHONE, presence: { present: false, reason } }),
    })),
  ])('scores 0 with no-free-physical for a worker with $story', ({ device }) => {
    const worker = aWorker('wrk-a', ...(device ? [devices(device)] : []));
    expect(warmHit.score(worker, requests.physicalIphone)).toBe(0);
    expect(warmHit.zeroReason?.(worker, requests.physicalIphone)).toEqual({
      reason: 'no-free-physical',
    });
  });
});
