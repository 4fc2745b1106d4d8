// The usage metrics of the leader: a request's wait and a lease's duration, observed once each
// (usage.ts says how), and the device time behind utilisation (utilisation.ts), brought up to now
// at every change of the fleet's views and at every scrape, so no timer of its own is needed. The
// same observations go into the last day's history the console's Usage page reads
// (usage-history.ts, published by usage-publisher.ts).
import type { Clock } from '../runtime/index.js';
import type { FleetCache } from './fleet-cache.js';
import type { ControllerMetrics } from './metrics.js';
import { grantedAtOf } from './request-life.js';
import { phaseShown } from './status.js';
import type { TrackedRequest } from './tracked-request.js';
import {
  DELETED_REASON,
  endWritten,
  grantStart,
  leaseEnded,
  UsageLabels,
  waitWritten,
  type UsageFacts,
  type WrittenStatus,
} from './usage.js';
import type { UsageHistory } from './usage-history.js';
import { UtilisationMeter } from './utilisation.js';

export class UsageObserver {
  private readonly labels: UsageLabels;
  private readonly meter = new UtilisationMeter();
  /** When the meter last advanced: the start of the span its next device time covers. */
  private advancedAt: number | undefined;

  constructor(
    private readonly metrics: ControllerMetrics,
    private readonly fleet: Pick<FleetCache, 'current'>,
    private readonly clock: Clock,
    private readonly history?: UsageHistory,
  ) {
    this.labels = new UsageLabels(() => fleet.current().views);
    metrics.beforeScrape = () => this.fleetChanged();
  }

  /** One of our status writes made it to the server: `before` is what it replaced there. */
  statusWritten(request: TrackedRequest, before: WrittenStatus | undefined, after: WrittenStatus) {
    const now = this.clock.now();
    const facts = factsOf(request);
    const wait = waitWritten(before, after, facts, this.labels, now);
    if (wait) {
      this.metrics.requestWait.observe(wait.labels, wait.seconds);
      this.history?.wait(now, wait.labels.platform, wait.labels.model, wait.seconds);
    }
    const end = endWritten(before, after, facts, this.labels, now);
    if (end) this.metrics.leaseDuration.observe(end.labels, end.seconds);
  }

  /** A request this process holds granted is being deleted: its holder let the device go. */
  grantedRequestDeleting(request: TrackedRequest): void {
    const facts = factsOf(request);
    const status = { phase: phaseShown(request), conditions: request.conditions };
    const started = grantStart(status, facts);
    const end = leaseEnded(facts, DELETED_REASON, started, this.clock.now(), this.labels);
    if (end) this.metrics.leaseDuration.observe(end.labels, end.seconds);
  }

  /** The views changed (or a scrape came): the time at the counts held until now is added. */
  fleetChanged(): void {
    const now = this.clock.now();
    const from = this.advancedAt ?? now;
    this.advancedAt = now;
    for (const time of this.meter.advance(now, this.fleet.current().views)) {
      const labels = { worker: time.worker, model: time.model };
      this.metrics.deviceLeasedSeconds.inc(labels, time.leasedSeconds);
      this.metrics.deviceAvailableSeconds.inc(labels, time.availableSeconds);
      this.history?.deviceTime(from, now, time.model, time.leasedSeconds, time.availableSeconds);
    }
  }

  /** The reconciler stopped: its fleet is no longer kept up to date, so nothing more is added. */
  stop(): void {
    this.fleetChanged();
    this.metrics.beforeScrape = () => undefined;
  }
}

function factsOf(request: TrackedRequest): UsageFacts {
  return {
    namespace: request.namespace,
    platform: request.spec.platform,
    model: request.spec.model,
    deviceModel: request.device?.model,
    createdAt: request.createdAt,
    grantedAt: grantedAtOf(request.life),
  };
}
