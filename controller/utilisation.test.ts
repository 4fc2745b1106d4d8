import { describe, expect, it } from 'vitest';
import type { Device } from '../api/index.js';
import { iosStatus, iphoneSimulator, physicalIphone } from '../test/fixtures/workers.js';
import type { Connection, WorkerView } from '../api/index.js';
import { UtilisationMeter } from './utilisation.js';

const view = (
  name: string,
  devices: Device[],
  connection: Connection = 'connected',
): WorkerView => ({
  name,
  connection,
  drained: false,
  status: iosStatus({ devices }),
});

const T0 = 1_000_000;

describe('device time', () => {
  it('adds the time between changes at the devices counted before each, by worker and model', () => {
    const meter = new UtilisationMeter();
    const free = [iphoneSimulator('s1'), iphoneSimulator('s2'), physicalIphone()];
    expect(meter.advance(T0, [view('a', free)])).toEqual([]);
    // 10 s later one simulator is leased.
    const oneLeased = [
      iphoneSimulator('s1', { state: 'leased' }),
      iphoneSimulator('s2'),
      physicalIphone(),
    ];
    expect(meter.advance(T0 + 10_000, [view('a', oneLeased)])).toEqual([
      { worker: 'a', model: 'iPhone 16', from: T0, leasedSeconds: 0, availableSeconds: 20 },
      { worker: 'a', model: 'iPhone 15 Pro', from: T0, leasedSeconds: 0, availableSeconds: 10 },
    ]);
    // 30 s more at one of two leased; the phone is then unplugged (absent: not available).
    const unplugged = [...oneLeased.slice(0, 2), physicalIphone({ state: 'absent' })];
    const at10 = T0 + 10_000;
    expect(meter.advance(T0 + 40_000, [view('a', unplugged)])).toEqual([
      { worker: 'a', model: 'iPhone 16', from: at10, leasedSeconds: 30, availableSeconds: 60 },
      { worker: 'a', model: 'iPhone 15 Pro', from: at10, leasedSeconds: 0, availableSeconds: 30 },
    ]);
    expect(meter.advance(T0 + 50_000, [view('a', unplugged)])).toEqual([
      {
        worker: 'a',
        model: 'iPhone 16',
        from: T0 + 40_000,
        leasedSeconds: 10,
        availableSeconds: 20,
      },
    ]);
  });

  it('counts nothing of a disconnected worker, nor of quarantined or deleted devices', () => {
    const meter = new UtilisationMeter();
    meter.advance(T0, [
      view('a', [iphoneSimulator('s1', { state: 'leased' })], 'disconnected'),
      view('b', [
        iphoneSimulator('s2', { state: 'quarantined' }),
        iphoneSimulator('s3', { state: 'deleted' }),
        iphoneSimulator('s4', { state: 'booting' }),
      ]),
    ]);
    expect(meter.advance(T0 + 1000, [])).toEqual([
      { worker: 'b', model: 'iPhone 16', from: T0, leasedSeconds: 0, availableSeconds: 1 },
    ]);
    expect(meter.advance(T0 + 2000, [])).toEqual([]);
  });

  it("adds one worker's time at its change, leaving the others' to theirs or the next scrape", () => {
    const meter = new UtilisationMeter();
    meter.advance(T0, [view('a', [iphoneSimulator('s1')]), view('b', [iphoneSimulator('s2')])]);
    // 10 s later a's simulator is leased: a's 10 s are added, b's wait.
    const aLeased = view('a', [iphoneSimulator('s1', { state: 'leased' })]);
    expect(meter.advanceWorker(T0 + 10_000, 'a', aLeased)).toEqual([
      { worker: 'a', model: 'iPhone 16', from: T0, leasedSeconds: 0, availableSeconds: 10 },
    ]);
    // b goes away 5 s later: its 15 s are added.
    expect(meter.advanceWorker(T0 + 15_000, 'b', undefined)).toEqual([
      { worker: 'b', model: 'iPhone 16', from: T0, leasedSeconds: 0, availableSeconds: 15 },
    ]);
    // A scrape at 20 s: a's 10 s since its change; b is gone.
    expect(meter.advance(T0 + 20_000, [aLeased])).toEqual([
      {
        worker: 'a',
        model: 'iPhone 16',
        from: T0 + 10_000,
        leasedSeconds: 10,
        availableSeconds: 10,
      },
    ]);
  });

  it('adds nothing when asked twice at once (a scrape right after a change)', () => {
    const meter = new UtilisationMeter();
    meter.advance(T0, [view('a', [iphoneSimulator('s1', { state: 'leased' })])]);
    meter.advance(T0 + 5000, [view('a', [iphoneSimulator('s1', { state: 'leased' })])]);
    expect(meter.advance(T0 + 5000, [view('a', [iphoneSimulator('s1')])])).toEqual([]);
  });
});
