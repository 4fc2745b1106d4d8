import { describe, expect, it } from 'vitest';
import { noPhysicalMatch, type DeviceSpec } from '../index.js';
import { assess } from './assess.js';
import {
  aWorker,
  atRamBudget,
  capabilities,
  devices,
  disconnected,
  drained,
  health,
  incompatible,
  IPAD,
  IPHONE,
  ownQueue,
  physicalDevice,
  platformFull,
  requests,
  servesOnly,
  unread,
  withoutModel,
  withoutRuntimes,
} from '../../test/fixtures/routing.js';

const noWorker = { kind: 'fail', code: 'NO_CAPACITY', details: { reason: 'no-worker' } };

describe('assess, virtual requests', () => {
  it.each([
    { story: 'an empty fleet', fleet: [] },
    {
      story: 'a fleet that is only drained, disconnected, unread or incompatible',
      fleet: [
        aWorker('wrk-a', drained),
        aWorker('wrk-b', disconnected),
        aWorker('wrk-c', unread),
        aWorker('wrk-d', incompatible),
      ],
    },
  ])('fails NO_CAPACITY no-worker when no known worker takes requests: $story', ({ fleet }) => {
    expect(assess(requests.iphone, fleet)).toMatchObject({
      ...noWorker,
      message:
        'no worker takes requests now: every known worker is drained, disconnected or not ready',
    });
  });

  it('fails NO_DRIVER when no known worker serves the platform', () => {
    const fleet = [aWorker('wrk-a', servesOnly('android')), aWorker('wrk-b', incompatible)];
    expect(assess(requests.iphone, fleet)).toEqual({
      kind: 'fail',
      code: 'NO_DRIVER',
      message: 'no worker serves iOS',
      details: { platform: 'ios' },
    });
  });

  it.each([
    {
      story: 'the model',
      request: requests.iphone,
      fleet: [aWorker('wrk-a', withoutModel(IPHONE))],
      message: 'no worker offers ios iPhone 16',
      details: { platform: 'ios', model: IPHONE },
    },
    {
      story: 'a model of the class',
      request: requests.anyIosTablet,
      fleet: [aWorker('wrk-a', withoutModel(IPAD))],
      message: 'no worker offers ios tablet',
      details: { platform: 'ios', class: 'tablet' },
    },
  ])(
    'fails UNKNOWN_MODEL when no known worker offers $story',
    ({ request, fleet, message, details }) => {
      expect(assess(request, [...fleet, aWorker('wrk-z', servesOnly('android'))])).toEqual({
        kind: 'fail',
        code: 'UNKNOWN_MODEL',
        message,
        details,
      });
    },
  );

  it('fails RUNTIME_MISSING when no worker offering the model has the OS, though another worker has it', () => {
    // wrk-a offers the model without the runtime, wrk-b the runtime without the model.
    const fleet = [
      aWorker('wrk-a', withoutRuntimes('ios')),
      aWorker('wrk-b', withoutModel(IPHONE)),
    ];
    expect(assess(requests.iphoneOn18, fleet)).toEqual({
      kind: 'fail',
      code: 'RUNTIME_MISSING',
      message: 'no worker that offers ios iPhone 16 has iOS 18.4 installed',
      details: { platform: 'ios', osVersion: '18.4' },
    });
  });

  it('fails CAPABILITY_MISSING when no worker that can serve it has the capability, naming what is missing', () => {
    const fleet = [
      aWorker('wrk-a'),
      aWorker('wrk-b', servesOnly('android'), capabilities('camera')),
    ];
    expect(assess({ ...requests.iphone, requires: ['camera'] }, fleet)).toEqual({
      kind: 'fail',
      code: 'CAPABILITY_MISSING',
      message: 'no worker that can serve ios iPhone 16 offers camera',
    });
  });

  it('fails CAPABILITY_MISSING when the capabilities are offered only on different workers', () => {
    const fleet = [aWorker('wrk-a', capabilities('camera')), aWorker('wrk-b', capabilities('nfc'))];
    expect(assess({ ...requests.iphone, requires: ['camera', 'nfc'] }, fleet)).toMatchObject({
      code: 'CAPABILITY_MISSING',
      message: 'no worker that can serve ios iPhone 16 offers all of camera, nfc together',
    });
  });

  it('fails NO_CAPACITY no-worker when the only workers that can serve it are drained or disconnected', () => {
    const fleet = [
      aWorker('wrk-a', drained),
      aWorker('wrk-b', disconnected),
      aWorker('wrk-c', servesOnly('android')),
    ];
    expect(assess(requests.iphone, fleet)).toMatchObject({
      ...noWorker,
      message: 'every worker that can serve ios iPhone 16 is drained, disconnected or not ready',
    });
  });

  it.each([
    { story: 'a worker that is full', worker: aWorker('wrk-a', platformFull('ios')) },
    { story: 'a worker at its RAM budget', worker: aWorker('wrk-a', atRamBudget('ios')) },
    { story: 'a worker busy with its own queue', worker: aWorker('wrk-a', ownQueue(3)) },
    { story: 'a worker still starting', worker: aWorker('wrk-a', health('starting')) },
    { story: 'an unhealthy worker', worker: aWorker('wrk-a', health('unhealthy')) },
  ])('routes (and lets it wait) with $story: it may take it later', ({ worker }) => {
    expect(assess(requests.iphone, [worker])).toEqual({ kind: 'route' });
  });
});

describe('assess, physical requests (DESIGN.md §3.3)', () => {
  it.each(['ready', 'leased', 'reclaiming', 'absent', 'quarantined'] as const)(
    'routes or waits when the only enrolled match is %s',
    (state) => {
      const fleet = [aWorker('wrk-a', devices(physicalDevice({ model: IPHONE, state })))];
      expect(assess(requests.physicalIphone, fleet)).toEqual({ kind: 'route' });
    },
  );

  it('routes or waits when the only enrolled match is ready but last read not present', () => {
    const device = physicalDevice({
      model: IPHONE,
      presence: { present: false, reason: 'not-present' },
    });
    expect(assess(requests.physicalIphone, [aWorker('wrk-a', devices(device))])).toEqual({
      kind: 'route',
    });
  });

  it.each([
    {
      story: 'with the model, class and OS it names',
      request: {
        platform: 'ios',
        model: IPHONE,
        class: 'phone',
        os: '>=18 <19',
        physical: true,
      } as DeviceSpec,
      details: { platform: 'ios', model: IPHONE, class: 'phone', osVersion: '>=18 <19' },
    },
    {
      story: 'with only the platform when it names nothing else',
      request: requests.anyPhysicalIos,
      details: { platform: 'ios' },
    },
  ])('fails UNKNOWN_MODEL when the only match is deleted, $story', ({ request, details }) => {
    const fleet = [aWorker('wrk-a', devices(physicalDevice({ model: IPHONE, state: 'deleted' })))];
    const { message } = noPhysicalMatch(request);
    expect(assess(request, fleet)).toEqual({
      kind: 'fail',
      code: 'UNKNOWN_MODEL',
      message,
      details,
    });
    expect(noPhysicalMatch(request).details).toEqual(details);
  });

  it('routes or waits when the catalog lists neither the model nor a runtime but a match is enrolled: no RUNTIME_MISSING', () => {
    const fleet = [
      aWorker(
        'wrk-a',
        withoutModel(IPHONE),
        withoutRuntimes('ios'),
        devices(physicalDevice({ model: IPHONE, os: '16.0' })),
      ),
    ];
    expect(assess(requests.physicalIphone, fleet)).toEqual({ kind: 'route' });
  });

  it('fails NO_DRIVER when no known worker has the platform in its catalog', () => {
    const fleet = [
      aWorker('wrk-a', servesOnly('android'), devices(physicalDevice({ model: IPHONE }))),
    ];
    expect(assess(requests.physicalIphone, fleet)).toMatchObject({
      kind: 'fail',
      code: 'NO_DRIVER',
    });
  });

  it('fails UNKNOWN_MODEL when only an incompatible worker lists a match', () => {
    const fleet = [
      aWorker('wrk-a', incompatible, devices(physicalDevice({ model: IPHONE }))),
      aWorker('wrk-b'),
    ];
    expect(assess(requests.physicalIphone, fleet)).toEqual({
      kind: 'fail',
      code: 'UNKNOWN_MODEL',
      ...noPhysicalMatch(requests.physicalIphone),
    });
  });

  it.each([
    { story: 'disconnected', change: disconnected },
    { story: 'drained', change: drained },
  ])('fails NO_CAPACITY no-worker when only a $story worker lists a match', ({ change }) => {
    const fleet = [
      aWorker('wrk-a', change, devices(physicalDevice({ model: IPHONE }))),
      aWorker('wrk-b'),
    ];
    expect(assess(requests.physicalIphone, fleet)).toMatchObject(noWorker);
  });

  it('matches an enrolled iPad for --class tablet, and not for a request naming neither class nor model', () => {
    const fleet = [aWorker('wrk-a', devices(physicalDevice({ model: IPAD, class: 'tablet' })))];
    expect(assess(requests.physicalIosTablet, fleet)).toEqual({ kind: 'route' });
    expect(assess(requests.anyPhysicalIos, fleet)).toMatchObject({
      kind: 'fail',
      code: 'UNKNOWN_MODEL',
    });
  });

  it('fails UNKNOWN_MODEL for Android when no Android device is enrolled anywhere', () => {
    const fleet = [aWorker('wrk-a', devices(physicalDevice({ model: IPHONE })))];
    expect(assess(requests.physicalAndroid, fleet)).toEqual({
      kind: 'fail',
      code: 'UNKNOWN_MODEL',
      ...noPhysicalMatch(requests.physicalAndroid),
    });
  });

  it('fails CAPABILITY_MISSING when the worker with the match lacks a required capability', () => {
    const fleet = [aWorker('wrk-a', devices(physicalDevice({ model: IPHONE })))];
    expect(assess({ ...requests.physicalIphone, requires: ['camera'] }, fleet)).toMatchObject({
      code: 'CAPABILITY_MISSING',
    });
  });
});
