// A clock for tests of code that awaits between timers (the agent's: a boot, then a presence
// read). runtime/'s ManualClock fires timers synchronously; this one lets promises settle between
// them.
import type { Clock, TimerHandle } from '../runtime/index.js';

interface PendingTimer {
  timerId: number;
  dueAt: number;
  callback: () => void;
}

/** Lets promise callbacks (and I/O that has already completed) run before the next step. */
export function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A clock that moves only when told. `advance` runs due timers in order and lets the promises they
 * start settle between steps, so code that awaits between timers behaves as it would in real time.
 */
export class FakeClock implements Clock {
  #now: number;
  #timers: PendingTimer[] = [];
  #nextId = 1;

  constructor(startMs = Date.UTC(2025, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timerId = this.#nextId++;
    this.#timers.push({ timerId, dueAt: this.#now + Math.max(0, delayMs), callback });
    return { timerId };
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((timer) => timer.timerId !== handle.timerId);
  }

  /** How many timers are waiting. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  async advance(durationMs: number): Promise<void> {
    const target = this.#now + durationMs;
    await flushPromises();
    for (;;) {
      const next = this.#nextDue(target);
      if (next === undefined) break;
      this.#timers = this.#timers.filter((timer) => timer !== next);
      this.#now = Math.max(this.#now, next.dueAt);
      next.callback();
      await flushPromises();
    }
    this.#now = target;
    await flushPromises();
  }

  #nextDue(limit: number): PendingTimer | undefined {
    let earliest: PendingTimer | undefined;
    for (const timer of this.#timers) {
      if (timer.dueAt > limit) continue;
      if (earliest === undefined || timer.dueAt < earliest.dueAt) earliest = timer;
    }
    return earliest;
  }
}
