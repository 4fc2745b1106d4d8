// Exec activity on leases, recorded cheaply for idle reclaim (ADR 0008): the Lease's
// status.activity says when an exec last ran and that one runs at least until `runningUntil`.
// At most one write per lease per ACTIVITY_WRITE_INTERVAL_MS, never one per exec: an exec that
// starts when none was written lately is written at once; while any runs, the record is renewed
// every interval, each time ACTIVITY_RUNNING_HORIZON_MS ahead, so the controller never reclaims a
// lease an exec is running on. Only a proxy with a running exec writes, so with several replicas
// the last write still reaches past the present.
import { ACTIVITY_RUNNING_HORIZON_MS, ACTIVITY_WRITE_INTERVAL_MS } from '../api/index.js';
import { isNotFound, simlockPath, type KubeClient, type Logger } from '../runtime/index.js';

interface LeaseActivity {
  running: number;
  lastWriteAt: number;
  timer: NodeJS.Timeout | undefined;
}

export interface ActivityRecorderOptions {
  client: KubeClient;
  log: Logger;
  now?: () => number;
  intervalMs?: number;
  horizonMs?: number;
}

export class ActivityRecorder {
  private readonly leases = new Map<string, LeaseActivity>();
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly horizonMs: number;
  /** Writes made, for tests and metrics. */
  writes = 0;

  constructor(private readonly options: ActivityRecorderOptions) {
    this.now = options.now ?? Date.now;
    this.intervalMs = options.intervalMs ?? ACTIVITY_WRITE_INTERVAL_MS;
    this.horizonMs = options.horizonMs ?? ACTIVITY_RUNNING_HORIZON_MS;
  }

  /** An exec started on the lease; call the answer when it ends. */
  started(namespace: string, name: string): () => void {
    const key = `${namespace}/${name}`;
    const lease = this.leases.get(key) ?? { running: 0, lastWriteAt: -Infinity, timer: undefined };
    this.leases.set(key, lease);
    lease.running += 1;
    this.schedule(key, lease, Math.max(0, lease.lastWriteAt + this.intervalMs - this.now()));
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      lease.running -= 1;
      // Nothing is written at the end: the last record's runningUntil lapses by itself.
    };
  }

  stop(): void {
    for (const lease of this.leases.values()) if (lease.timer) clearTimeout(lease.timer);
    this.leases.clear();
  }

  private schedule(key: string, lease: LeaseActivity, delayMs: number): void {
    if (lease.timer !== undefined) return;
    lease.timer = setTimeout(() => {
      lease.timer = undefined;
      if (lease.running <= 0) {
        this.leases.delete(key);
        return;
      }
      void this.write(key, lease).then((written) =>
        this.schedule(key, lease, written ? this.intervalMs : 1000),
      );
    }, delayMs);
    lease.timer.unref();
  }

  private async write(key: string, lease: LeaseActivity): Promise<boolean> {
    const [namespace = '', name = ''] = key.split('/');
    const now = this.now();
    lease.lastWriteAt = now;
    try {
      await this.options.client.patch(
        simlockPath('lease', { namespace, name, subresource: 'status' }),
        {
          status: {
            activity: {
              lastExecAt: new Date(now).toISOString(),
              runningUntil: new Date(now + this.horizonMs).toISOString(),
            },
          },
        },
      );
      this.writes += 1;
      return true;
    } catch (error) {
      if (isNotFound(error)) {
        lease.running = 0;
        return true;
      }
      // Tried again a second later while the exec runs; the interval counts from this try.
      this.options.log.warn('could not record exec activity; retrying', { lease: key, error });
      return false;
    }
  }
}
