// Pending dispatches in a worker's view: each takes a ready device that fits (or the one granted)
// and a running slot, so routing stops offering a worker the controller has already filled.
import { describe, expect, it } from 'vitest';
import type { Device } from '../api/index.js';
import { iosCapacity, iosStatus, iphoneSimulator } from '../test/fixtures/workers.js';
import { assumeDispatches, viewShowsFreed, viewShowsLeased } from './assume.js';
import type { WorkerView } from '../api/index.js';

function simulator(id: string, state: Device['state'] = 'ready'): Device {
  return iphoneSimulator(id, { state });
}

function view(devices: Device[], running: number, evictable: number, limit = 4): WorkerView {
  const slots = { limit, running, evictable };
  return {
    name: 'wrk-a',
    connection: 'connected',
    drained: false,
    status: iosStatus({ capacity: iosCapacity(slots, slots), devices }),
  };
}

const iphone = { platform: 'ios' as const, model: 'iPhone 16' };

describe('assumeDispatches', () => {
  it('answers the same view when nothing is pending', () => {
    const worker = view([simulator('a')], 1, 1);
    expect(assumeDispatches(worker, [])).toBe(worker);
  });

  it('leases a warm device that fits and takes its evictable slot', () => {
    const worker = view([simulator('a'), simulator('b')], 2, 2);
    const assumed = assumeDispatches(worker, [{ spec: iphone }]);
    expect(assumed.status?.devices.map((device) => device.state)).toEqual(['leased', 'ready']);
    expect(assumed.status?.capacity?.global).toEqual({ limit: 4, running: 2, evictable: 1 });
    expect(assumed.status?.capacity?.platforms.ios?.evictable).toBe(1);
    // The view handed in is never changed.
    expect(worker.status?.devices[0]?.state).toBe('ready');
  });

  it('takes a free running slot for a cold boot, once no warm device fits', () => {
    const worker = view([simulator('a', 'leased')], 1, 0, 2);
    const assumed = assumeDispatches(worker, [{ spec: iphone }]);
    expect(assumed.status?.capacity?.platforms.ios).toMatchObject({ running: 2, evictable: 0 });
  });

  it('leases the very device granted, when the view still shows it ready', () => {
    const worker = view([simulator('a'), simulator('b')], 2, 2);
    const assumed = assumeDispatches(worker, [{ spec: iphone, deviceId: 'b' }]);
    expect(assumed.status?.devices.map((device) => device.state)).toEqual(['ready', 'leased']);
  });

  it('fills a worker: as many dispatches as it has room for leave it without room', () => {
    const worker = view([simulator('a'), simulator('b')], 2, 2, 2);
    const assumed = assumeDispatches(worker, [{ spec: iphone }, { spec: iphone }]);
    const ios = assumed.status?.capacity?.platforms.ios;
    expect(ios && ios.limit - ios.running + ios.evictable).toBe(0);
  });

  it('takes no running slot for a physical device', () => {
    const phone: Device = { ...simulator('p'), physical: true, model: 'iPhone 15 Pro' };
    const worker = view([phone], 0, 0);
    const assumed = assumeDispatches(worker, [
      { spec: { platform: 'ios', model: 'iPhone 15 Pro', physical: true } },
    ]);
    expect(assumed.status?.devices[0]?.state).toBe('leased');
    expect(assumed.status?.capacity?.global.running).toBe(0);
  });
});

describe('released devices', () => {
  it('gives a released device back, ready, with its slot evictable again', () => {
    const worker = view([simulator('a', 'leased'), simulator('b', 'leased')], 2, 0, 2);
    const assumed = assumeDispatches(worker, [], [{ deviceId: 'a', physical: false }]);
    expect(assumed.status?.devices.map((device) => device.state)).toEqual(['ready', 'leased']);
    expect(assumed.status?.capacity?.platforms.ios).toMatchObject({ running: 2, evictable: 1 });
  });

  it('then lets a pending dispatch take it: room for exactly one', () => {
    const worker = view([simulator('a', 'leased')], 1, 0, 1);
    const assumed = assumeDispatches(
      worker,
      [{ spec: iphone }],
      [{ deviceId: 'a', physical: false }],
    );
    const ios = assumed.status?.capacity?.platforms.ios;
    expect(assumed.status?.devices[0]?.state).toBe('leased');
    expect(ios && ios.limit - ios.running + ios.evictable).toBe(0);
  });

  it('knows when the view shows a released device free', () => {
    const worker = view([simulator('a', 'leased'), simulator('b')], 2, 1);
    expect(viewShowsFreed(worker, 'a')).toBe(false);
    expect(viewShowsFreed(worker, 'b')).toBe(true);
    expect(viewShowsFreed(worker, 'gone')).toBe(true);
  });
});

describe('viewShowsLeased', () => {
  it('says whether the view shows the granted device taken', () => {
    const worker = view([simulator('a', 'leased'), simulator('b')], 2, 1);
    expect(viewShowsLeased(worker, 'a')).toBe(true);
    expect(viewShowsLeased(worker, 'b')).toBe(false);
    expect(viewShowsLeased(worker, 'gone')).toBe(false);
  });
});
