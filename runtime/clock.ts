// Time, injected: controller and agent read the time and set timers only through a Clock, so tests
// can move time by hand (Kueue's habit) and nothing reads Date.now() in the middle of a decision.

export interface TimerHandle {
  readonly timerId: number;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Resolves after `delayMs` on the given clock; rejects with the signal's reason if aborted. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(signal?.reason as Error);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The real clock. Timers are unref'd: servers and watches keep a process alive, not timers. */
export function systemClock(): Clock {
  const timers = new Map<number, NodeJS.Timeout>();
  let nextId = 1;
  return {
    now: () => Date.now(),
    setTimeout(callback, delayMs) {
      const timerId = nextId++;
      const timer = setTimeout(
        () => {
          timers.delete(timerId);
          callback();
        },
        Math.max(0, delayMs),
      );
      timer.unref();
      timers.set(timerId, timer);
      return { timerId };
    },
    clearTimeout(handle) {
      clearTimeout(timers.get(handle.timerId));
      timers.delete(handle.timerId);
    },
  };
}

/** A clock that moves only when told to: `advance(ms)` runs every timer that falls due, in order. */
export class ManualClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, { due: number; callback: () => void }>();

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): TimerHandle {
    const timerId = this.nextId++;
    this.timers.set(timerId, { due: this.current + Math.max(0, delayMs), callback });
    return { timerId };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle.timerId);
  }

  advance(ms: number): void {
    const end = this.current + ms;
    // Fire due timers one at a time in due order; a callback may set new timers that fall due too.
    for (;;) {
      let next: [number, { due: number; callback: () => void }] | undefined;
      for (const entry of this.timers)
        if (entry[1].due <= end && (!next || entry[1].due < next[1].due)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.current = Math.max(this.current, next[1].due);
      next[1].callback();
    }
    this.current = end;
  }

  get pendingTimers(): number {
    return this.timers.size;
  }
}
