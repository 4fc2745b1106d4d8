// The agent's heartbeat: a coordination.k8s.io Lease `worker-<name>` renewed every few seconds,
// like a kubelet's node lease. The Worker object is never rewritten for liveness.
import { heartbeatLeaseName } from '../../api/index.js';
import {
  coordinationLease,
  coordinationLeasePath,
  isConflict,
  isNotFound,
  microTime,
  type Clock,
  type KubeClient,
  type Logger,
  WorkQueue,
} from '../../runtime/index.js';

export interface HeartbeatOptions {
  client: KubeClient;
  clock: Clock;
  log: Logger;
  namespace: string;
  worker: string;
  durationSeconds: number;
  /** Renew this often; a quarter of the duration by default. */
  renewEveryMs?: number;
  /** Give up on one renewal after this long; half the duration by default. */
  renewalTimeoutMs?: number;
}

/** A failed renewal is tried again after a quarter of the period, and within this at most. */
const RETRY_AFTER_FAILURE_MS = 1000;

export class Heartbeat {
  /** One key, `renew`, looked at again every renewal period. */
  private readonly queue: WorkQueue<'renew'>;
  private stopped = false;
  private lastRenewal = 0;

  constructor(private readonly options: HeartbeatOptions) {
    this.queue = new WorkQueue({
      name: 'heartbeat',
      clock: options.clock,
      reconcile: () => this.beat(),
    });
  }

  get renewedAt(): number {
    return this.lastRenewal;
  }

  start(): void {
    this.queue.add('renew');
  }

  stop(): void {
    this.stopped = true;
    void this.queue.shutDown();
  }

  /**
   * One renewal, then the next one period later. A failed renewal is tried again after a quarter
   * of the period (a second at most), never with a growing backoff: one stuck from a quarter into
   * the lease is given up at three quarters, and the next must land before the lease lapses.
   */
  private async beat(): Promise<{ requeueAfterMs: number } | undefined> {
    if (this.stopped) return undefined;
    const periodMs = this.options.renewEveryMs ?? (this.options.durationSeconds * 1000) / 4;
    let failed = false;
    try {
      await this.renew();
      this.lastRenewal = this.options.clock.now();
    } catch (error) {
      failed = true;
      this.options.log.warn('heartbeat renewal failed', { error });
    }
    if (this.stopped) return undefined;
    return { requeueAfterMs: failed ? Math.min(periodMs / 4, RETRY_AFTER_FAILURE_MS) : periodMs };
  }

  async renew(): Promise<void> {
    const { client, namespace, worker, durationSeconds, clock } = this.options;
    // A renewal still unanswered after half the lease cannot keep it anyway. Giving up then (the
    // client's default is 30 s) means the next try opens a new connection: after a partition the
    // old one can stay dead long after the network is back, and the Worker would lapse meanwhile.
    const settings = { timeoutMs: this.options.renewalTimeoutMs ?? (durationSeconds * 1000) / 2 };
    const name = heartbeatLeaseName(worker);
    const spec = {
      holderIdentity: worker,
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(clock.now()),
    };
    try {
      await client.patch(coordinationLeasePath(namespace, name), { spec }, 'merge', settings);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await client.create(
          coordinationLeasePath(namespace),
          coordinationLease({ name, namespace }, { ...spec, acquireTime: spec.renewTime }),
          settings,
        );
      } catch (createError) {
        if (!isConflict(createError)) throw createError;
      }
    }
  }
}
