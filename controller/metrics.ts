// Prometheus metrics of the controller.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The states of simlock_workers: every one is shown, 0 included, so an alert can read it. */
const WORKER_STATES = ['ready', 'disconnected', 'incompatible', 'drained', 'not-ready'] as const;

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly queueLength = new Gauge({
    name: 'simlock_queue_length',
    help: 'Requests waiting in the controller queue.',
    registers: [this.registry],
  });
  readonly waitingByReason = new Gauge({
    name: 'simlock_waiting_reasons',
    help: 'Per-worker reasons of waiting requests, by reason.',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly walks = new Counter({
    name: 'simlock_walks_total',
    help: 'Walks of the queue.',
    registers: [this.registry],
  });
  readonly walkSeconds = new Histogram({
    name: 'simlock_walk_duration_seconds',
    help: 'Time one walk took (routing only, no I/O).',
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [this.registry],
  });
  readonly dispatches = new Counter({
    name: 'simlock_dispatches_total',
    help: 'Leases created.',
    labelNames: ['stage'],
    registers: [this.registry],
  });
  readonly grants = new Counter({
    name: 'simlock_grants_total',
    help: 'Requests granted.',
    registers: [this.registry],
  });
  readonly refusals = new Counter({
    name: 'simlock_refusals_total',
    help: 'Refusals by agents, by code and capacity reason.',
    labelNames: ['code', 'capacity_reason'],
    registers: [this.registry],
  });
  readonly failures = new Counter({
    name: 'simlock_failures_total',
    help: 'Requests failed, by code.',
    labelNames: ['code'],
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'simlock_status_writes_total',
    help: 'LeaseRequest status writes.',
    registers: [this.registry],
  });
  readonly grantEventsLeftOut = new Counter({
    name: 'simlock_grant_events_left_out_total',
    help: "Plain grants told by their request's status alone: past the grant Events' rate (ADR 0028).",
    registers: [this.registry],
  });
  readonly apiWrites = new Counter({
    name: 'simlock_api_writes_total',
    help: 'Writes (POST, PUT, PATCH, DELETE) to the API server, leader election excluded.',
    labelNames: ['method'],
    registers: [this.registry],
  });

  // Usage (usage.ts, utilisation.ts, usage-observer.ts). Observed by the leader only, once each.
  readonly requestWait = new Histogram({
    name: 'simlock_request_wait_seconds',
    help: "Time from a request's creation to its grant, by platform, model and namespace.",
    labelNames: ['platform', 'model', 'namespace'],
    // From a warm device at once to a queue of hours.
    buckets: [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400],
    registers: [this.registry],
  });
  readonly leaseDuration = new Histogram({
    name: 'simlock_lease_duration_seconds',
    help: "Time from a grant to the lease's end, by platform, device model and why it ended.",
    labelNames: ['platform', 'model', 'reason'],
    buckets: [10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400],
    registers: [this.registry],
  });
  readonly deviceLeasedSeconds = new Counter({
    name: 'simlock_device_leased_seconds_total',
    help: 'Device-seconds leased, by worker and model (utilisation: rate of this over available).',
    labelNames: ['worker', 'model'],
    registers: [this.registry],
    collect: () => this.beforeScrape(),
  });
  readonly deviceAvailableSeconds = new Counter({
    name: 'simlock_device_available_seconds_total',
    help: 'Device-seconds available (booting, ready, leased or reclaiming), by worker and model.',
    labelNames: ['worker', 'model'],
    registers: [this.registry],
    collect: () => this.beforeScrape(),
  });
  readonly workers = new Gauge({
    name: 'simlock_workers',
    help:
      'Workers this controller knows, by whether they take requests: ready, or why not ' +
      '(disconnected, incompatible, drained, not-ready).',
    labelNames: ['state'],
    registers: [this.registry],
    collect: () => {
      const counts = this.countWorkers();
      for (const state of WORKER_STATES) this.workers.set({ state }, counts.get(state) ?? 0);
    },
  });
  /** The known workers by state; set by a reconciler to read its fleet at a scrape. */
  countWorkers: () => ReadonlyMap<string, number> = () => new Map();
  /**
   * Brings the time counters up to now; set by the usage observer while a reconciler runs. Both
   * counters call it (a scrape reads both): the second call adds nothing (utilisation.ts).
   */
  beforeScrape: () => void = () => undefined;

  constructor(defaults = false) {
    if (defaults) collectDefaultMetrics({ register: this.registry });
  }
}
