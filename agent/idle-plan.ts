// Which idle devices to shut down and which to delete, now: a pure function of the devices, the
// clock and the idle settings. A booted device nobody leases is shut down after `shutdownAfter`,
// beyond the `warm` number kept ready per model (the ones ready longest go first); a device the
// agent made, shut down and unused for `deleteAfter`, is deleted, keeping `warm` of its model in
// existence. While disk space is low, every device the agent made that is shut down is deleted
// (oldest first), whatever its age. Leased, booting, reclaiming and quarantined devices are never
// touched: the granter runs this inside its decisions, so a sweep never races a grant.
import type { PlannedDevice } from './planner.js';

export interface IdleSettings {
  shutdownAfterMs: number;
  deleteAfterMs: number;
  /** Devices kept booted per model (model name, any case). */
  warm: Readonly<Record<string, number>>;
}

export interface IdleDevice extends PlannedDevice {
  /** Made by the agent in its own place (it may delete it). */
  deletable?: boolean;
  /** When it was last seen shut down after being up (or first listed shut down). */
  shutDownSinceMs?: number;
}

export interface IdlePlan {
  shutdown: IdleDevice[];
  delete: IdleDevice[];
}

function warmOf(model: string, warm: Readonly<Record<string, number>>): number {
  const wanted = model.toLowerCase();
  for (const [name, count] of Object.entries(warm)) if (name.toLowerCase() === wanted) return count;
  return 0;
}

function byModel(devices: readonly IdleDevice[]): Map<string, IdleDevice[]> {
  const groups = new Map<string, IdleDevice[]>();
  for (const device of devices) {
    const key = `${device.platform}/${device.model.toLowerCase()}`;
    groups.set(key, [...(groups.get(key) ?? []), device]);
  }
  return groups;
}

export function planIdle(
  devices: readonly IdleDevice[],
  nowMs: number,
  settings: IdleSettings,
  diskLow = false,
): IdlePlan {
  const virtual = devices.filter((device) => !device.physical);
  const plan: IdlePlan = { shutdown: [], delete: [] };

  // Ready ones: keep the warm number per model (those ready most recently), shut down the rest
  // that have been idle long enough, the longest idle first.
  for (const group of byModel(virtual.filter((device) => device.state === 'ready')).values()) {
    const keep = warmOf(group[0]!.model, settings.warm);
    const oldestFirst = [...group].sort(
      (a, b) => (a.readySinceMs ?? 0) - (b.readySinceMs ?? 0) || a.id.localeCompare(b.id),
    );
    const beyondWarm = oldestFirst.slice(0, Math.max(0, oldestFirst.length - keep));
    plan.shutdown.push(
      ...beyondWarm.filter(
        (device) => nowMs - (device.readySinceMs ?? nowMs) >= settings.shutdownAfterMs,
      ),
    );
  }

  // Shut-down ones the agent made: keep the warm number per model in existence (counting the
  // ones running), delete the rest idle long enough, or all of them while disk is low.
  for (const group of byModel(virtual).values()) {
    const keep = diskLow ? 0 : warmOf(group[0]!.model, settings.warm);
    const existing = group.length;
    const deletable = group
      .filter((device) => device.state === 'shutdown' && device.deletable === true)
      .sort(
        (a, b) => (a.shutDownSinceMs ?? 0) - (b.shutDownSinceMs ?? 0) || a.id.localeCompare(b.id),
      );
    const room = Math.max(0, existing - keep);
    plan.delete.push(
      ...deletable
        .filter(
          (device) =>
            diskLow || nowMs - (device.shutDownSinceMs ?? nowMs) >= settings.deleteAfterMs,
        )
        .slice(0, room),
    );
  }
  return plan;
}
