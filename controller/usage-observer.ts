// The usage metrics of the leader: a request's wait and a lease's duration, observed once each
// (usage.ts says how), and the device time behind utilisation (utilisation.ts): a worker's brought
// up to now at each change of its view, every worker's at every scrape and publish, so no timer of
// its own is needed. The same observations go into the last day's history the console's Usage
// page reads (usage-history.ts, published by usage-publisher.ts).
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
import { UtilisationMeter, type DeviceTime } from './utilisation.js';

export class UsageObserver {
  private readonly labels: UsageLabels;
  private readonly meter = new UtilisationMeter();

  constructor(
    private readonly metrics: ControllerMetrics,
    private readonly fleet: Pick<FleetCache, 'current' | 'view'>,
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

  /** Worker `name`'s view changed or went: its time at the counts it held until now is added. */
  workerChanged(name: string): void {
    const now = this.clock.now();
    this.add(now, this.meter.advanceWorker(now, name, this.fleet.view(name)));
  }

  /** A scrape or a publish came: every worker's time until now is added. */
  fleetChanged(): void {
    const now = this.clock.now();
    this.add(now, this.meter.advance(now, this.fleet.current().views));
  }

  private add(now: number, times: readonly DeviceTime[]): void {
    for (const time of times) {
      const labels = { worker: time.worker, model: time.model };
      this.metrics.deviceLeasedSeconds.inc(labels, time.leasedSeconds);
      this.metrics.deviceAvailableSeconds.inc(labels, time.availableSeconds);
      this.history?.deviceTime(
        time.from,
        now,
        time.model,
        time.leasedSeconds,
        time.availableSeconds,
      );
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
