import { describe, expect, it } from 'vitest';
import { aPlannedSimulator } from '../test/fixtures/driver-devices.js';
import { planIdle, type IdleDevice, type IdleSettings } from './idle-plan.js';

const MINUTE = 60_000;
const settings: IdleSettings = {
  shutdownAfterMs: 10 * MINUTE,
  deleteAfterMs: 24 * 60 * MINUTE,
  warm: {},
};

const ids = (devices: readonly IdleDevice[]) => devices.map((device) => device.id);

describe('planIdle', () => {
  it('shuts down a device ready and unleased for shutdownAfter, not sooner', () => {
    const devices = [
      aPlannedSimulator('long', 'ready', { readySinceMs: 0 }),
      aPlannedSimulator('recent', 'ready', { readySinceMs: 5 * MINUTE }),
    ];
    expect(ids(planIdle(devices, 10 * MINUTE, settings).shutdown)).toEqual(['long']);
    expect(ids(planIdle(devices, 10 * MINUTE - 1, settings).shutdown)).toEqual([]);
  });

  it('never touches a leased, booting, reclaiming or quarantined device, nor a phone', () => {
    const devices = [
      aPlannedSimulator('leased', 'leased', { readySinceMs: 0 }),
      aPlannedSimulator('booting', 'booting'),
      aPlannedSimulator('reclaiming', 'reclaiming'),
      aPlannedSimulator('quarantined', 'quarantined', { deletable: true }),
      aPlannedSimulator('phone', 'ready', { physical: true, readySinceMs: 0 }),
    ];
    expect(planIdle(devices, 100 * 24 * 60 * MINUTE, settings, true)).toEqual({
      shutdown: [],
      delete: [],
    });
  });

  it('keeps the warm number per model ready, the most recently ready ones', () => {
    const devices = [
      aPlannedSimulator('a', 'ready', { readySinceMs: 0 }),
      aPlannedSimulator('b', 'ready', { readySinceMs: 1 }),
      aPlannedSimulator('c', 'ready', { readySinceMs: 2 }),
      aPlannedSimulator('pixel', 'ready', {
        readySinceMs: 0,
        model: 'Pixel 8',
        platform: 'android',
      }),
    ];
    const plan = planIdle(devices, 60 * MINUTE, { ...settings, warm: { 'IPHONE 16': 2 } });
    expect(ids(plan.shutdown)).toEqual(['a', 'pixel']);
  });

  it('deletes a device it made after deleteAfter shut down, never one it did not make', () => {
    const day = 24 * 60 * MINUTE;
    const devices = [
      aPlannedSimulator('made-old', 'shutdown', { deletable: true, shutDownSinceMs: 0 }),
      aPlannedSimulator('made-new', 'shutdown', { deletable: true, shutDownSinceMs: day / 2 }),
      aPlannedSimulator('adopted', 'shutdown', { shutDownSinceMs: 0 }),
    ];
    expect(ids(planIdle(devices, day, settings).delete)).toEqual(['made-old']);
  });

  it('keeps warm devices of a model in existence when deleting', () => {
    const devices = [
      aPlannedSimulator('up', 'leased'),
      aPlannedSimulator('down-1', 'shutdown', { deletable: true, shutDownSinceMs: 0 }),
      aPlannedSimulator('down-2', 'shutdown', { deletable: true, shutDownSinceMs: 1 }),
    ];
    const plan = planIdle(devices, 10 * 24 * 60 * MINUTE, {
      ...settings,
      warm: { 'iPhone 16': 2 },
    });
    expect(ids(plan.delete)).toEqual(['down-1']);
  });

  it('while disk is low deletes every shut-down device it made, oldest first, whatever its age', () => {
    const devices = [
      aPlannedSimulator('newer', 'shutdown', { deletable: true, shutDownSinceMs: 2 * MINUTE }),
      aPlannedSimulator('older', 'shutdown', { deletable: true, shutDownSinceMs: MINUTE }),
      aPlannedSimulator('adopted', 'shutdown', { shutDownSinceMs: 0 }),
    ];
    const plan = planIdle(devices, 3 * MINUTE, { ...settings, warm: { 'iPhone 16': 3 } }, true);
    expect(ids(plan.delete)).toEqual(['older', 'newer']);
  });
});
