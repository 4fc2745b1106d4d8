// Exec activity on leases, recorded cheaply for idle reclaim (ADR 0008): the Lease's
// status.activity says when an exec last ran and that one runs at least until `runningUntil`.
// At most one write per lease per ACTIVITY_WRITE_INTERVAL_MS, never one per exec: an exec that
// starts when none was written lately is written at once; while any runs, the record is renewed
// every interval, each time ACTIVITY_RUNNING_HORIZON_MS ahead, so the controller never reclaims a
// lease an exec is running on. An exec that ended before its write (a short one, started within
// an interval of the last write) is written at the next turn as activity at its end, its record
// reaching a horizon past it: the write comes at most an interval after the exec ended, so with
// several replicas the last write still reaches past the present. Time is the injected Clock's.
import { ACTIVITY_RUNNING_HORIZON_MS, ACTIVITY_WRITE_INTERVAL_MS } from '../api/index.js';
import {
  isNotFound,
  simlockPath,
  systemClock,
  type Clock,
  type KubeClient,
  type Logger,
  type TimerHandle,
} from '../runtime/index.js';

/** What one write records on the Lease's status. */
export interface ActivityRecord {
  lastExecAt: string;
  runningUntil: string;
}

/** Writes the record on the Lease; throws NotFound when the Lease is gone. */
export type ActivityWriter = (
  namespace: string,
  name: string,
  record: ActivityRecord,
) => Promise<void>;

/** The writer of the proxy: a patch of the Lease's status subresource. */
export function leaseStatusActivityWriter(client: KubeClient): ActivityWriter {
  return async (namespace, name, record) => {
    await client.patch(simlockPath('lease', { namespace, name, subresource: 'status' }), {
      status: { activity: record },
    });
  };
}

/** A failed write is tried again this long after, while an exec runs. */
const RETRY_MS = 1000;

interface LeaseActivity {
  running: number;
  lastWriteAt: number;
  /** An exec started since the last write (it may have ended since). */
  activeSinceWrite: boolean;
  /** When the last exec ended. */
  lastEndedAt: number;
  timer: TimerHandle | undefined;
}

export interface ActivityRecorderOptions {
  write: ActivityWriter;
  log: Logger;
  clock?: Clock;
  intervalMs?: number;
  horizonMs?: number;
}

export class ActivityRecorder {
  private readonly leases = new Map<string, LeaseActivity>();
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly horizonMs: number;

  constructor(private readonly options: ActivityRecorderOptions) {
    this.clock = options.clock ?? systemClock();
    this.intervalMs = options.intervalMs ?? ACTIVITY_WRITE_INTERVAL_MS;
    this.horizonMs = options.horizonMs ?? ACTIVITY_RUNNING_HORIZON_MS;
  }

  /** An exec started on the lease; call the answer when it ends. */
  started(namespace: string, name: string): () => void {
    const key = `${namespace}/${name}`;
    const lease = this.leases.get(key) ?? {
      running: 0,
      lastWriteAt: -Infinity,
      activeSinceWrite: false,
      lastEndedAt: -Infinity,
      timer: undefined,
    };
    this.leases.set(key, lease);
    lease.running += 1;
    lease.activeSinceWrite = true;
    this.schedule(key, lease, lease.lastWriteAt + this.intervalMs - this.clock.now());
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      lease.running -= 1;
      lease.lastEndedAt = this.clock.now();
      // Nothing is written at the end: the last record's runningUntil lapses by itself.
    };
  }

  stop(): void {
    for (const lease of this.leases.values()) if (lease.timer) this.clock.clearTimeout(lease.timer);
    this.leases.clear();
  }

  private schedule(key: string, lease: LeaseActivity, delayMs: number): void {
    if (lease.timer !== undefined) return;
    lease.timer = this.clock.setTimeout(
      () => {
        lease.timer = undefined;
        if (lease.running <= 0 && !lease.activeSinceWrite) {
          this.leases.delete(key);
          return;
        }
        void this.write(key, lease).then((written) =>
          this.schedule(key, lease, written ? this.intervalMs : RETRY_MS),
        );
      },
      Math.max(0, delayMs),
    );
  }

  private async write(key: string, lease: LeaseActivity): Promise<boolean> {
    const [namespace = '', name = ''] = key.split('/');
    const now = this.clock.now();
    lease.lastWriteAt = now;
    // Active now while one runs; else at the end of the last one.
    const activeAt = lease.running > 0 ? now : lease.lastEndedAt;
    lease.activeSinceWrite = false;
    try {
      await this.options.write(namespace, name, {
        lastExecAt: new Date(activeAt).toISOString(),
        runningUntil: new Date(activeAt + this.horizonMs).toISOString(),
      });
      return true;
    } catch (error) {
      if (isNotFound(error)) {
        lease.running = 0;
        return true;
      }
      // Tried again a second later; the interval counts from this try.
      lease.activeSinceWrite = true;
      this.options.log.warn('could not record exec activity; retrying', { lease: key, error });
      return false;
    }
  }
}
