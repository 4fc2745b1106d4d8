// A process's event-loop delay while a benchmark runs, read from its Prometheus metrics.

/**
 * The controller's event-loop delay, the most in any interval: prom-client's
 * `nodejs_eventloop_lag_max_seconds` is the most since its last read (it resets its histogram on
 * each), so reading it every 2 s gives each 2 s's worst.
 */
export class LoopLagPoller {
  private timer: NodeJS.Timeout | undefined;
  private maxMs = 0;
  private reading: Promise<void> = Promise.resolve();

  constructor(private readonly metrics: () => Promise<Record<string, number>>) {}

  start(): void {
    // The first read empties what was held before the clock: not the side's.
    this.reading = this.metrics().then(
      () => undefined,
      () => undefined,
    );
    this.timer = setInterval(() => this.read(), 2000);
  }

  private read(): void {
    this.reading = this.reading
      .then(() => this.metrics())
      .then(
        (values) => {
          const lag = values['nodejs_eventloop_lag_max_seconds'];
          if (lag !== undefined) this.maxMs = Math.max(this.maxMs, Math.round(lag * 1000));
        },
        () => undefined, // a read missed: its interval counts in the next one
      );
  }

  /** Stops, after a last read; answers the most found. */
  async stop(): Promise<number> {
    if (this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.read();
    }
    await this.reading;
    return this.maxMs;
  }
}
