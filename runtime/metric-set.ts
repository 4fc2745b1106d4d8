// A component's Prometheus metrics, one registry each: the controller's, the agent's and the
// proxy's sets extend this and declare each metric in a line (name, help, labels), so the
// declarations say what is measured rather than repeat prom-client's options.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export class MetricSet {
  readonly registry = new Registry();

  /** `defaults`: the process's own metrics too (CPU, memory, event loop), as a server has them. */
  constructor(defaults = false) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }

  /** `collect`: called at each scrape, to bring the value up to now. */
  counter<T extends string>(
    name: string,
    help: string,
    labelNames: readonly T[] = [],
    collect?: () => void,
  ): Counter<T> {
    return new Counter({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect ? { collect } : {}),
    });
  }

  /** `collect`: called at each scrape, to set the value it reads. */
  gauge<T extends string>(
    name: string,
    help: string,
    labelNames: readonly T[] = [],
    collect?: () => void,
  ): Gauge<T> {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect ? { collect } : {}),
    });
  }

  histogram<T extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly T[] = [],
  ): Histogram<T> {
    return new Histogram({ name, help, buckets, labelNames, registers: [this.registry] });
  }
}
