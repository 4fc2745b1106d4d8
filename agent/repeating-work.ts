// The work the agent's core repeats on the injected clock (the listing, the driver's health
// check, the crash probe): each run waits its interval after the previous one settled, so a slow
// run never overlaps the next, and nothing is scheduled once stopped. Apart from core.ts so the
// core says what it repeats and how often, not how timers are chained.
import type { Clock, TimerHandle } from '../runtime/index.js';

export class RepeatingWork {
  readonly #clock: Clock;
  readonly #timers = new Map<string, TimerHandle>();
  #running = false;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Runs each work every `intervalMs` (the first run one interval from now) until stop(). */
  start(works: readonly { name: string; intervalMs: number; run: () => Promise<void> }[]): void {
    this.#running = true;
    for (const work of works) this.#schedule(work.name, work.intervalMs, work.run);
  }

  stop(): void {
    this.#running = false;
    for (const timer of this.#timers.values()) this.#clock.clearTimeout(timer);
  }

  #schedule(name: string, intervalMs: number, run: () => Promise<void>): void {
    if (!this.#running) return;
    const timer = this.#clock.setTimeout(() => {
      void run().finally(() => this.#schedule(name, intervalMs, run));
    }, intervalMs);
    this.#timers.set(name, timer);
  }
}
