// The slot arithmetic, case by case.
import { describe, expect, it } from 'vitest';
import { fitsOneMore, freeSlots, giveSlot, hasRoom, takeSlot } from './slots.js';

describe('slots', () => {
  it('counts free slots, never below none', () => {
    expect(freeSlots({ limit: 4, running: 1 })).toBe(3);
    expect(freeSlots({ limit: 2, running: 3 })).toBe(0);
  });

  it('has room for a cold boot with a free slot or an evictable device', () => {
    expect(hasRoom({ limit: 2, running: 1, evictable: 0 })).toBe(true);
    expect(hasRoom({ limit: 2, running: 2, evictable: 1 })).toBe(true);
    expect(hasRoom({ limit: 2, running: 2, evictable: 0 })).toBe(false);
    expect(hasRoom(undefined)).toBe(false);
    expect(fitsOneMore(1, 2)).toBe(true);
    expect(fitsOneMore(2, 2)).toBe(false);
  });

  it('takes a warm device out of the evictable ones, and a cold boot an evictable or a free slot', () => {
    expect(takeSlot({ limit: 4, running: 2, evictable: 2 }, true)).toEqual({
      limit: 4,
      running: 2,
      evictable: 1,
    });
    expect(takeSlot({ limit: 4, running: 2, evictable: 1 }, false)).toEqual({
      limit: 4,
      running: 2,
      evictable: 0,
    });
    expect(takeSlot({ limit: 4, running: 2, evictable: 0 }, false)).toEqual({
      limit: 4,
      running: 3,
      evictable: 0,
    });
  });

  it('gives a leased device back as evictable, never more than are running', () => {
    expect(giveSlot({ limit: 4, running: 2, evictable: 1 })).toEqual({
      limit: 4,
      running: 2,
      evictable: 2,
    });
    expect(giveSlot({ limit: 4, running: 2, evictable: 2 }).evictable).toBe(2);
  });
});
