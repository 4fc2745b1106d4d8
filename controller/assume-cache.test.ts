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

  it("holds a grant past the agent's wait to write devices taken, and a release no longer than before (ADR 0029)", () => {
    const cache = new AssumeCache(15_000, 3000);
    const fleet = fleetOf([simulator('a'), simulator('b', 'leased')]);
    cache.confirm('ns/r1', 'wrk-a', iphone, 'a', 0);
    cache.assumeReleased('wrk-a', { deviceId: 'b', physical: false }, 0);
    expect(states(cache.fleetAt(fleet, 5000).fleet)).toEqual(['leased', 'leased']);
    expect(cache.fleetAt(fleet, 14_999).nextExpiry).toBe(15_000);
    expect(cache.fleetAt(fleet, 15_000).fleet).toBe(fleet);
  });
});
