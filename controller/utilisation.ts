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
  /** When the span began: the worker's last change, or the last time every worker was brought up. */
  from: number;
  leasedSeconds: number;
  availableSeconds: number;
}

interface Count {
  model: string;
  leased: number;
  available: number;
}

/** A worker's devices as counted at its last change, by model, and when that was. */
interface Counted {
  counts: Map<string, Count>;
  since: number;
}

/**
 * Holds each worker's devices as counted at its last change and, when the worker changes again,
 * adds the time since then at those counts (its view did not change in between). A change of one
 * worker touches that worker alone: at a thousand workers, bringing every worker up to date at
 * every change of any one held the controller's event loop for up to half a second at a time
 * (docs/PERFORMANCE.md §8.2, ADR 0039).
 */
export class UtilisationMeter {
  private readonly workers = new Map<string, Counted>();

  /** Worker `name` changed (undefined: gone): the time since its last change, then its new counts. */
  advanceWorker(now: number, name: string, view: WorkerView | undefined): DeviceTime[] {
    const added = this.close(now, name);
    if (view === undefined) this.workers.delete(name);
    else this.workers.set(name, { counts: countDevices(view), since: now });
    return added;
  }

  /**
   * Every worker brought up to now (a scrape, the history's publish), recounted from `views`:
   * the time since each one's last change at its counts, then the counts of `views`.
   */
  advance(now: number, views: readonly WorkerView[]): DeviceTime[] {
    const added: DeviceTime[] = [];
    const seen = new Set<string>();
    for (const view of views) {
      seen.add(view.name);
      added.push(...this.advanceWorker(now, view.name, view));
    }
    for (const name of [...this.workers.keys()]) {
      if (!seen.has(name)) added.push(...this.advanceWorker(now, name, undefined));
    }
    return added;
  }

  private close(now: number, name: string): DeviceTime[] {
    const counted = this.workers.get(name);
    if (counted === undefined) return [];
    const elapsed = Math.max(0, now - counted.since) / 1000;
    if (elapsed === 0) return [];
    return [...counted.counts.values()].map((count) => ({
      worker: name,
      model: count.model,
      from: counted.since,
      leasedSeconds: count.leased * elapsed,
      availableSeconds: count.available * elapsed,
    }));
  }
}

/**
 * A connected worker's devices by model. A disconnected worker's devices are counted in neither:
 * nothing is known of them until it is back.
 */
function countDevices(view: WorkerView): Map<string, Count> {
  const counts = new Map<string, Count>();
  if (view.connection !== 'connected') return counts;
  for (const device of view.status?.devices ?? []) {
    if (!AVAILABLE_STATES.has(device.state)) continue;
    let count = counts.get(device.model);
    if (!count) {
      count = { model: device.model, leased: 0, available: 0 };
      counts.set(device.model, count);
    }
    count.available += 1;
    if (device.state === 'leased') count.leased += 1;
  }
  return counts;
}
