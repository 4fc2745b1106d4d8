// Whether a view differs from the last one written only by devices taken: devices listed before
// as ready are leased now, and the slots moved as taking them moves them (api/slots.ts, takeSlot:
// a warm device leased is no longer evictable). That is what the controller's assume cache counts
// for its own grants until the view shows them (controller/assume.ts makes the same change to a
// view), so the agent may write such a view later (view.ts, ADR 0029). Anything else (a device
// given back, added or gone, a slot taken by a boot, a limit, the health, the queue) is not. Pure.
import {
  sameJson,
  type Capacity,
  type Device,
  type Platform,
  type Slots,
  type WorkerStatus,
} from '../api/index.js';

export function onlyTaken(before: WorkerStatus, after: WorkerStatus): boolean {
  // The slots string follows the global counts (`running/limit`); the rest must not move.
  const rest = (status: WorkerStatus) => ({
    ...status,
    devices: [],
    capacity: undefined,
    slots: undefined,
  });
  if (!sameJson(rest(before), rest(after))) return false;
  const taken = devicesTaken(before.devices, after.devices);
  if (taken === undefined || taken.length === 0) return false;
  return slotsTaken(before.capacity, after.capacity, taken);
}

/**
 * The devices taken (ready before, leased now) when nothing else moved: the same devices in the
 * same order, each as it was but for that state; undefined when anything else moved.
 */
function devicesTaken(before: readonly Device[], after: readonly Device[]): Device[] | undefined {
  if (before.length !== after.length) return undefined;
  const taken: Device[] = [];
  for (const [index, device] of before.entries()) {
    const now = after[index];
    if (now === undefined || !sameJson({ ...device, state: '' }, { ...now, state: '' }))
      return undefined;
    if (now.state === device.state) continue;
    if (device.state !== 'ready' || now.state !== 'leased') return undefined;
    taken.push(now);
  }
  return taken;
}

/**
 * The same limits and running counts; evictable down by no more than the warm devices taken (a
 * physical device takes no slot).
 */
function slotsTaken(
  before: Capacity | undefined,
  after: Capacity | undefined,
  taken: readonly Device[],
): boolean {
  if (before === undefined || after === undefined) return before === after;
  const warm = (platform?: Platform) =>
    taken.filter((device) => !device.physical && (!platform || device.platform === platform))
      .length;
  const pairs: [Slots | undefined, Slots | undefined, number][] = [
    [before.global, after.global, warm()],
    [before.platforms.ios, after.platforms.ios, warm('ios')],
    [before.platforms.android, after.platforms.android, warm('android')],
  ];
  return pairs.every(([was, is, most]) => {
    if (was === undefined || is === undefined) return was === is;
    const fixed = (slots: Slots) => ({ ...slots, evictable: 0 });
    const fewer = was.evictable - is.evictable;
    return sameJson(fixed(was), fixed(is)) && fewer >= 0 && fewer <= most;
  });
}
