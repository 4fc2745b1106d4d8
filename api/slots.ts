// Running slots: the one arithmetic of a capacity's `{limit, running, evictable}` (global, or one
// platform's), shared by the agent's planner, routing's free-slot and free-capacity stages and the
// controller's assumptions. A running device is a simulator or emulator booting, ready, leased or
// reclaiming; an evictable one is ready and idle (warm), and may be shut down for a cold boot.
// Physical devices take no slot.

export interface Slots {
  limit: number;
  running: number;
  evictable: number;
}

/** Slots free without shutting anything down. */
export function freeSlots(slots: Pick<Slots, 'limit' | 'running'>): number {
  return Math.max(0, slots.limit - slots.running);
}

/** Whether one more running device fits under the limit as it is (no eviction). */
export function fitsOneMore(running: number, limit: number): boolean {
  return running + 1 <= limit;
}

/** Whether a cold boot can start: a free slot, or an idle warm device to evict. */
export function hasRoom(slots: Slots | undefined): boolean {
  return slots !== undefined && (freeSlots(slots) > 0 || slots.evictable > 0);
}

/**
 * The slots once one more device is leased: a warm one was running already and is no longer
 * evictable; a cold boot takes an evictable one's slot (it will be shut down) or a free one.
 */
export function takeSlot<T extends Slots>(slots: T, warm: boolean): T {
  if (warm || slots.evictable > 0) return { ...slots, evictable: Math.max(0, slots.evictable - 1) };
  return { ...slots, running: slots.running + 1 };
}

/** The slots once a leased device is idle again: still running, evictable once more. */
export function giveSlot<T extends Slots>(slots: T): T {
  return { ...slots, evictable: Math.min(slots.running, slots.evictable + 1) };
}
