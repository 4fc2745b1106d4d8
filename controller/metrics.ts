// Prometheus metrics of the controller.
import { MetricSet } from '../runtime/index.js';

/** The states of simlock_workers: every one is shown, 0 included, so an alert can read it. */
const WORKER_STATES = ['ready', 'disconnected', 'incompatible', 'drained', 'not-ready'] as const;

export class ControllerMetrics extends MetricSet {
  readonly queueLength = this.gauge(
    'simlock_queue_length',
    'Requests waiting in the controller queue.',
  );
  readonly waitingByReason = this.gauge(
    'simlock_waiting_reasons',
    'Per-worker reasons of waiting requests, by reason.',
    ['reason'],
  );
  readonly walks = this.counter('simlock_walks_total', 'Walks of the queue.');
  readonly walkSeconds = this.histogram(
    'simlock_walk_duration_seconds',
    'Time one walk took (routing only, no I/O).',
    [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1],
  );
  readonly dispatches = this.counter('simlock_dispatches_total', 'Leases created.', ['stage']);
  readonly grants = this.counter('simlock_grants_total', 'Requests granted.');
  readonly refusals = this.counter(
    'simlock_refusals_total',
    'Refusals by agents, by code and capacity reason.',
    ['code', 'capacity_reason'],
  );
  readonly failures = this.counter('simlock_failures_total', 'Requests failed, by code.', ['code']);
  readonly statusWrites = this.counter(
    'simlock_status_writes_total',
    'LeaseRequest status writes.',
  );
  readonly heartbeatLapsesHeld = this.counter(
    'simlock_heartbeat_lapses_held_total',
    "Workers' heartbeat lapses held because the API server was not answering the controller either.",
  );
  readonly grantEventsLeftOut = this.counter(
    'simlock_grant_events_left_out_total',
    "Plain grants told by their request's status alone: past the grant Events' rate (ADR 0028).",
  );
  readonly apiWrites = this.counter(
    'simlock_api_writes_total',
    'Writes (POST, PUT, PATCH, DELETE) to the API server, leader election excluded.',
    ['method'],
  );

  // Usage (usage.ts, utilisation.ts, usage-observer.ts). Observed by the leader only, once each.
  readonly requestWait = this.histogram(
    'simlock_request_wait_seconds',
    "Time from a request's creation to its grant, by platform, model and namespace.",
    // From a warm device at once to a queue of hours.
    [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400],
    ['platform', 'model', 'namespace'],
  );
  readonly leaseDuration = this.histogram(
    'simlock_lease_duration_seconds',
    "Time from a grant to the lease's end, by platform, device model and why it ended.",
    [10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400],
    ['platform', 'model', 'reason'],
  );
  readonly deviceLeasedSeconds = this.counter(
    'simlock_device_leased_seconds_total',
    'Device-seconds leased, by worker and model (utilisation: rate of this over available).',
    ['worker', 'model'],
    () => this.beforeScrape(),
  );
  readonly deviceAvailableSeconds = this.counter(
    'simlock_device_available_seconds_total',
    'Device-seconds available (booting, ready, leased or reclaiming), by worker and model.',
    ['worker', 'model'],
    () => this.beforeScrape(),
  );
  readonly workers = this.gauge(
    'simlock_workers',
    'Workers this controller knows, by whether they take requests: ready, or why not ' +
      '(disconnected, incompatible, drained, not-ready).',
    ['state'],
    () => {
      const counts = this.countWorkers();
      for (const state of WORKER_STATES) this.workers.set({ state }, counts.get(state) ?? 0);
    },
  );
  /** The known workers by state; set by a reconciler to read its fleet at a scrape. */
  countWorkers: () => ReadonlyMap<string, number> = () => new Map();
  /**
   * Brings the time counters up to now; set by the usage observer while a reconciler runs. Both
   * counters call it (a scrape reads both): the second call adds nothing (utilisation.ts).
   */
  beforeScrape: () => void = () => undefined;
}
