// Device utilisation per worker and model, as time: the seconds devices were leased and the
// seconds they were available, summed from the fleet's views (pure). Counters of time, not a
// gauge of devices: a gauge is sampled at each scrape and misses every lease shorter than the
// scrape interval, while time summed between changes of the views counts each second once. Only
// the leader has a fleet cache (main.ts starts the reconciler when it leads), so one process adds
// at a time; a new leader starts its counters at zero, which `rate()` reads as a reset, and the
// seconds between the old leader's last scrape and the new one's start are counted by neither,
// in both counters alike, so `rate(leased) / rate(available)` stays right across a failover.
import type { DeviceState } from '../api/index.js';
import type { WorkerView } from '../api/index.js';

/** Devices that could serve a lease or serve one: made, booted or booting, present, in service. */
const AVAILABLE_STATES: ReadonlySet<DeviceState> = new Set<DeviceState>([
  'booting',
  'ready',
  'leased',
  'reclaiming',
]);

export interface DeviceTime {
  worker: string;
  model: string;
  leasedSeconds: number;
  availableSeconds: number;
}

interface Count {
  worker: string;
  model: string;
  leased: number;
  available: number;
}

/**
 * Holds the devices counted at the last change and, at each `advance`, adds the time since then
 * at those counts (the views did not change in between: every change advances first).
 */
export class UtilisationMeter {
  private counts = new Map<string, Count>();
  private lastAt: number | undefined;

  /** The time since the last advance at the counts held; then holds the counts of `views`. */
  advance(now: number, views: readonly WorkerView[]): DeviceTime[] {
    const elapsed = this.lastAt === undefined ? 0 : Math.max(0, now - this.lastAt) / 1000;
    const added: DeviceTime[] = [];
    if (elapsed > 0)
      for (const count of this.counts.values())
        added.push({
          worker: count.worker,
          model: count.model,
          leasedSeconds: count.leased * elapsed,
          availableSeconds: count.available * elapsed,
        });
    this.lastAt = now;
    this.counts = countDevices(views);
    return added;
  }
}

/**
 * Devices of connected workers by worker and model. A disconnected worker's devices are counted
 * in neither: nothing is known of them until it is back.
 */
function countDevices(views: readonly WorkerView[]): Map<string, Count> {
  const counts = new Map<string, Count>();
  for (const view of views) {
    if (view.connection !== 'connected') continue;
    for (const device of view.status?.devices ?? []) {
      if (!AVAILABLE_STATES.has(device.state)) continue;
      const key = `${view.name}\n${device.model}`;
      let count = counts.get(key);
      if (!count) {
        count = { worker: view.name, model: device.model, leased: 0, available: 0 };
        counts.set(key, count);
      }
      count.available += 1;
      if (device.state === 'leased') count.leased += 1;
    }
  }
  return counts;
}
