// The assume cache's life of an assumption: assumed at dispatch, confirmed at the grant, expired
// or shown by the view, forgotten when the dispatch came to nothing.
import { describe, expect, it } from 'vitest';
import type { Device } from '../api/index.js';
import { iosCapacity, iosStatus, iphoneSimulator } from '../test/fixtures/workers.js';
import { AssumeCache } from './assume-cache.js';
import type { WorkerView } from '../api/index.js';
import type { Fleet } from './walk.js';

function simulator(id: string, state: Device['state'] = 'ready'): Device {
  return iphoneSimulator(id, { state });
}

function fleetOf(devices: Device[]): Fleet {
  const slots = { limit: 4, running: 2, evictable: 2 };
  const status = iosStatus({ capacity: iosCapacity(slots, slots), devices });
  const view: WorkerView = { name: 'wrk-a', connection: 'connected', drained: false, status };
  return { views: [view], viewRevisions: new Map([['wrk-a', 1]]) };
}

const iphone = { platform: 'ios' as const, model: 'iPhone 16' };
const states = (fleet: Fleet) => fleet.views[0]?.status?.devices.map((device) => device.state);

describe('AssumeCache', () => {
  it('answers the fleet as it is when nothing is assumed', () => {
    const fleet = fleetOf([simulator('a')]);
    expect(new AssumeCache(3000).fleetAt(fleet, 0).fleet).toBe(fleet);
  });

  it('counts an assumed dispatch until it is forgotten', () => {
    const cache = new AssumeCache(3000);
    const fleet = fleetOf([simulator('a'), simulator('b')]);
    cache.assume('ns/r1', 'wrk-a', iphone);
    expect(states(cache.fleetAt(fleet, 0).fleet)).toEqual(['leased', 'ready']);
    cache.forget('ns/r1');
    expect(cache.fleetAt(fleet, 0).fleet).toBe(fleet);
  });

  it('keeps the same adjusted view while nothing changed (routing memoizes by view)', () => {
    const cache = new AssumeCache(3000);
    const fleet = fleetOf([simulator('a'), simulator('b')]);
    cache.assume('ns/r1', 'wrk-a', iphone);
    expect(cache.fleetAt(fleet, 0).fleet.views[0]).toBe(cache.fleetAt(fleet, 1).fleet.views[0]);
  });

  it('counts a confirmed grant on its device until the view shows it', () => {
    const cache = new AssumeCache(3000);
    cache.confirm('ns/r1', 'wrk-a', iphone, 'b', 0);
    const { fleet, nextExpiry } = cache.fleetAt(fleetOf([simulator('a'), simulator('b')]), 10);
    expect(states(fleet)).toEqual(['ready', 'leased']);
    expect(nextExpiry).toBe(3000);
    const shown = fleetOf([simulator('a'), simulator('b', 'leased')]);
    expect(cache.fleetAt(shown, 20).fleet).toBe(shown);
  });

  it('lets a confirmed grant expire when the view never shows it', () => {
    const cache = new AssumeCache(3000);
    const fleet = fleetOf([simulator('a'), simulator('b')]);
    cache.confirm('ns/r1', 'wrk-a', iphone, 'b', 0);
    expect(cache.fleetAt(fleet, 3000)).toEqual({ fleet, nextExpiry: undefined });
  });

  it('counts a released device free until the view shows it ready, or it expires', () => {
    const cache = new AssumeCache(3000);
    const fleet = fleetOf([simulator('a', 'leased')]);
    cache.assumeReleased('wrk-a', { deviceId: 'a', physical: false }, 0);
    expect(states(cache.fleetAt(fleet, 10).fleet)).toEqual(['ready']);
    expect(cache.fleetAt(fleet, 3000).fleet).toBe(fleet);
  });

  it('takes a released device granted again as taken, though the view still shows the lease before', () => {
    const cache = new AssumeCache(15_000, 3000);
    // The view written while the lease before held "a": it never showed "a" free again.
    const fleet = fleetOf([simulator('a', 'leased'), simulator('b', 'leased')]);
    cache.assumeReleased('wrk-a', { deviceId: 'a', physical: false }, 0);
    cache.assume('ns/r1', 'wrk-a', iphone);
    expect(states(cache.fleetAt(fleet, 10).fleet)).toEqual(['leased', 'leased']);
    cache.confirm('ns/r1', 'wrk-a', iphone, 'a', 20);
    expect(states(cache.fleetAt(fleet, 30).fleet)).toEqual(['leased', 'leased']);
  });

  it("holds a grant past the agent's wait to write devices taken, and a release no longer than before (ADR 0029)", () => {
    const cache = new AssumeCache(15_000, 3000);
    const fleet = fleetOf([simulator('a'), simulator('b', 'leased')]);
    cache.confirm('ns/r1', 'wrk-a', iphone, 'a', 0);
    cache.assumeReleased('wrk-a', { deviceId: 'b', physical: false }, 0);
    expect(states(cache.fleetAt(fleet, 5000).fleet)).toEqual(['leased', 'leased']);
    expect(cache.fleetAt(fleet, 14_999).nextExpiry).toBe(15_000);
    expect(cache.fleetAt(fleet, 15_000).fleet).toBe(fleet);
  });

  it('sees a change of a worker whose adjusted view it kept, and keeps the others as they were', () => {
    const cache = new AssumeCache(3000);
    const a = fleetOf([simulator('a'), simulator('b'), simulator('c')]);
    const viewB: WorkerView = { ...(a.views[0] as WorkerView), name: 'wrk-b' };
    const fleet: Fleet = { views: [...a.views, viewB], viewRevisions: new Map() };
    cache.assume('ns/r1', 'wrk-a', iphone);
    cache.assume('ns/r2', 'wrk-b', iphone);
    const first = cache.fleetAt(fleet, 0).fleet;
    cache.assume('ns/r3', 'wrk-a', iphone);
    const second = cache.fleetAt(fleet, 1).fleet;
    expect(second.views[0]?.status?.devices.map((device) => device.state)).toEqual([
      'leased',
      'leased',
      'ready',
    ]);
    expect(second.views[1]).toBe(first.views[1]);
    cache.forget('ns/r1');
    cache.forget('ns/r3');
    expect(cache.fleetAt(fleet, 2).fleet.views[0]).toBe(a.views[0]);
  });

  it('drops a confirmed grant at its expiry though nothing else changed since the last walk', () => {
    const cache = new AssumeCache(3000);
    const fleet = fleetOf([simulator('a'), simulator('b')]);
    cache.confirm('ns/r1', 'wrk-a', iphone, 'b', 0);
    expect(states(cache.fleetAt(fleet, 2999).fleet)).toEqual(['ready', 'leased']);
    expect(cache.fleetAt(fleet, 3000).fleet).toBe(fleet);
  });
});
