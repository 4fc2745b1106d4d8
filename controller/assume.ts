// The controller's own dispatches in the worker views it routes on (kube-scheduler "assumes" a pod
// on its node in the same way). An agent reports its view debounced, so for a moment after a
// dispatch, or after a grant, the view still shows the device free. Without this, every walk in
// that moment dispatched to the same worker again, and the agent refused what it had no room for:
// in a burst of 2000 requests on 100 workers, more than half of all dispatches came back refused.
// The agent's check still wins: an assumption only keeps the controller from asking in vain.
//
// The other way round too: a Lease the agent let go of (its finalizer removed) had its device
// reclaimed, so that device is free before the view says so; a request waiting for it is dispatched
// at once instead of a view debounce later.
//
// Pure: a view and the dispatches (and releases) not yet in it in, an adjusted view out. Each
// pending dispatch takes the device it was granted (if the view shows it ready) or the first ready
// device that fits it, and a running slot: an idle warm one first (evictable), else a free one. Each
// release gives its device back, ready, as an idle warm one.
import {
  fitsDevice,
  giveSlot,
  takeSlot,
  type Device,
  type DeviceSpec,
  type WorkerStatus,
} from '../api/index.js';
import type { WorkerView } from '../api/index.js';

export interface PendingDispatch {
  spec: DeviceSpec;
  /** The device granted, once the agent has answered. */
  deviceId?: string | undefined;
}

export interface ReleasedDevice {
  deviceId: string;
  physical: boolean;
}

/** Whether the view already shows a released device ready again (or no longer lists it). */
export function viewShowsFreed(view: WorkerView, deviceId: string): boolean {
  const device = view.status?.devices.find((candidate) => candidate.id === deviceId);
  return device === undefined || device.state === 'ready';
}

/** Whether the view already shows a granted device as leased (the dispatch is in it). */
export function viewShowsLeased(view: WorkerView, deviceId: string): boolean {
  return (
    view.status?.devices.some((device) => device.id === deviceId && device.state !== 'ready') ===
    true
  );
}

/** The view as it will be once the agent has reported these dispatches. */
export function assumeDispatches(
  view: WorkerView,
  pending: readonly PendingDispatch[],
  released: readonly ReleasedDevice[] = [],
): WorkerView {
  const status = view.status;
  if (!status || pending.length + released.length === 0) return view;
  const devices: Device[] = [...status.devices];
  const capacity = status.capacity
    ? {
        global: { ...status.capacity.global },
        platforms: {
          ...(status.capacity.platforms.ios ? { ios: { ...status.capacity.platforms.ios } } : {}),
          ...(status.capacity.platforms.android
            ? { android: { ...status.capacity.platforms.android } }
            : {}),
        },
      }
    : undefined;
  for (const release of released) {
    const index = devices.findIndex(
      (device) => device.id === release.deviceId && device.state !== 'ready',
    );
    const device = index >= 0 ? devices[index] : undefined;
    if (!device) continue;
    devices[index] = { ...device, state: 'ready' };
    if (release.physical || !capacity) continue;
    capacity.global = giveSlot(capacity.global);
    const platform = capacity.platforms[device.platform];
    if (platform) capacity.platforms[device.platform] = giveSlot(platform);
  }
  for (const dispatch of pending) {
    const index = devices.findIndex((device) =>
      dispatch.deviceId !== undefined
        ? device.id === dispatch.deviceId && device.state === 'ready'
        : device.state === 'ready' &&
          device.physical === (dispatch.spec.physical === true) &&
          fitsDevice(dispatch.spec, device),
    );
    const device = index >= 0 ? devices[index] : undefined;
    if (device) devices[index] = { ...device, state: 'leased' };
    // A physical device takes no running slot.
    if (dispatch.spec.physical === true || !capacity) continue;
    // A warm device was already running (and evictable while idle); a cold boot takes a slot.
    const warm = device !== undefined;
    capacity.global = takeSlot(capacity.global, warm);
    const platform = capacity.platforms[dispatch.spec.platform];
    if (platform) capacity.platforms[dispatch.spec.platform] = takeSlot(platform, warm);
  }
  const adjusted: WorkerStatus = { ...status, devices, ...(capacity ? { capacity } : {}) };
  return { ...view, status: adjusted };
}
