import { describe, expect, it } from 'vitest';
import {
  aWorker,
  devices,
  IPAD,
  IPHONE,
  physicalDevice,
  requests,
  servesOnly,
  unread,
  withoutModel,
  withoutRuntimes,
} from '../../../test/fixtures/routing.js';
import { canServe } from './can-serve.js';

describe('can-serve, virtual requests', () => {
  it.each([
    {
      story: 'a worker with no driver for the platform',
      worker: aWorker('wrk-a', servesOnly('android')),
      request: requests.iphone,
      reason: 'no-driver',
    },
    {
      story: 'a worker whose catalog is not read',
      worker: aWorker('wrk-a', unread),
      request: requests.iphone,
      reason: 'no-driver',
    },
    {
      story: 'a worker that does not offer the model',
      worker: aWorker('wrk-a', withoutModel(IPHONE)),
      request: requests.iphone,
      reason: 'unknown-model',
    },
    {
      story: 'a worker that offers no model of the class',
      worker: aWorker('wrk-a', withoutModel(IPAD)),
      request: requests.anyIosTablet,
      reason: 'unknown-model',
    },
    {
      story: 'a worker without a runtime of the OS asked for',
      worker: aWorker('wrk-a'),
      request: { ...requests.iphone, os: '17.5' },
      reason: 'runtime-missing',
    },
    {
      story: 'a worker with no runtime of the platform at all',
      worker: aWorker('wrk-a', withoutRuntimes('ios')),
      request: requests.iphone,
      reason: 'runtime-missing',
    },
    {
      story: 'a worker missing platform, model and runtime, with the first: no-driver',
      worker: aWorker('wrk-a', servesOnly('android'), withoutModel(IPHONE), withoutRuntimes('ios')),
      request: { ...requests.iphone, os: '17.5' },
      reason: 'no-driver',
    },
    {
      story: 'a worker missing model and runtime, with the first: unknown-model',
      worker: aWorker('wrk-a', withoutModel(IPHONE)),
      request: { ...requests.iphone, os: '17.5' },
      reason: 'unknown-model',
    },
  ])('drops $story', ({ worker, request, reason }) => {
    expect(canServe.check(worker, request)).toEqual({ reason });
  });

  it.each([
    {
      story: 'a worker that offers the model and a runtime of the OS',
      request: requests.iphoneOn18,
    },
    {
      story: 'a worker that offers the model in another case',
      request: { platform: 'ios', model: 'IPHONE 16' } as const,
    },
    {
      story: 'a worker with a runtime in the OS range',
      request: { ...requests.iphone, os: '>=18 <19' },
    },
    { story: 'a worker that offers a tablet, for any tablet', request: requests.anyIosTablet },
  ])('keeps $story', ({ request }) => {
    expect(canServe.check(aWorker('wrk-a'), request)).toBeUndefined();
  });
});

describe('can-serve, physical requests', () => {
  it('drops a worker with no driver for the platform, even with a matching device enrolled', () => {
    const worker = aWorker(
      'wrk-a',
      servesOnly('android'),
      devices(physicalDevice({ model: IPHONE })),
    );
    expect(canServe.check(worker, requests.physicalIphone)).toEqual({ reason: 'no-driver' });
  });

  it.each([
    { story: 'a worker with no physical device', worker: aWorker('wrk-a') },
    {
      story: 'a worker whose only match is deleted',
      worker: aWorker('wrk-a', devices(physicalDevice({ model: IPHONE, state: 'deleted' }))),
    },
    {
      story: 'a worker with only a simulator of the model',
      worker: aWorker('wrk-a', devices({ ...physicalDevice({ model: IPHONE }), physical: false })),
    },
    {
      story: 'a worker whose device runs another OS',
      worker: aWorker('wrk-a', devices(physicalDevice({ model: IPHONE, os: '17.5' }))),
      request: { ...requests.physicalIphone, os: '18' },
    },
  ])('drops $story with unknown-model', ({ worker, request }) => {
    expect(canServe.check(worker, request ?? requests.physicalIphone)).toEqual({
      reason: 'unknown-model',
    });
  });

  it.each(['ready', 'leased', 'reclaiming', 'absent', 'quarantined', 'booting'] as const)(
    'keeps a worker whose matching device is %s: enrolled in any state but deleted',
    (state) => {
      const worker = aWorker('wrk-a', devices(physicalDevice({ model: IPHONE, state })));
      expect(canServe.check(worker, requests.physicalIphone)).toBeUndefined();
    },
  );

  it('keeps a worker whose catalog lists neither the model nor a runtime, when a match is enrolled', () => {
    const worker = aWorker(
      'wrk-a',
      withoutModel(IPHONE),
      withoutRuntimes('ios'),
      devices(physicalDevice({ model: IPHONE })),
    );
    expect(canServe.check(worker, requests.physicalIphone)).toBeUndefined();
  });

  it('matches an enrolled iPad for a tablet, and not for a request naming neither class nor model', () => {
    const worker = aWorker('wrk-a', devices(physicalDevice({ model: IPAD, class: 'tablet' })));
    expect(canServe.check(worker, requests.physicalIosTablet)).toBeUndefined();
    expect(canServe.check(worker, requests.anyPhysicalIos)).toEqual({ reason: 'unknown-model' });
  });
});
