// Leader election on a coordination.k8s.io Lease, in the manner of client-go's leaderelection:
// read the Lease; take it when it is free or its holder's lease has run out; write it back with the
// resourceVersion we read, so the API server's optimistic concurrency is the lock (409 = lost the
// race); renew about every third of the duration; stop leading as soon as a renewal deadline
// passes without a successful renewal; give the Lease up on shutdown so a successor need not wait.
// The deadline is kept by a timer of its own, and counts from when the last successful renewal was
// sent (the renewTime it wrote, which is what a successor counts from): a renewal that hangs (etcd
// restarting, a dead connection) must not keep us leading past it, or two replicas lead at once.
import type { Clock } from './clock.js';
import { isConflict, isNotFound, type KubeClient } from './kube-client.js';
import { coordinationLease, coordinationLeasePath } from './paths.js';
import type { Logger } from './log.js';

export interface LeaderElectionOptions {
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  clock: Clock;
  log: Logger;
  leaseDurationSeconds?: number;
  /** Leading ends when no renewal succeeded for this long (client-go's renewDeadline). */
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
  /**
   * Told of every try to take or renew the Lease: sent, then answered (taken or not) or failed.
   * The one write the process makes on a clock, it says whether the API server is answering.
   */
  renewals?: RenewalObserver | undefined;
}

export interface RenewalObserver {
  sent(at: number): void;
  answered(at: number): void;
  failed(): void;
}

interface CoordinationLease {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number;
  };
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '000Z');
}

export class LeaderElector {
  private leading = false;
  private stopped = false;
  private lastRenewal = 0;
  private timer: ReturnType<Clock['setTimeout']> | undefined;
  private deadlineTimer: ReturnType<Clock['setTimeout']> | undefined;
  private readonly durationSeconds: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;

  constructor(private readonly options: LeaderElectionOptions) {
    this.durationSeconds = options.leaseDurationSeconds ?? 15;
    this.renewDeadlineMs = options.renewDeadlineMs ?? (this.durationSeconds * 1000 * 2) / 3;
    this.retryPeriodMs = options.retryPeriodMs ?? (this.durationSeconds * 1000) / 3;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    const { clock, log } = this.options;
    const sentAt = clock.now();
    // A renewal may take only what is left of the deadline; a candidate, the whole of it.
    const timeoutMs = this.leading
      ? Math.max(1, this.lastRenewal + this.renewDeadlineMs - sentAt)
      : this.renewDeadlineMs;
    let renewed = false;
    const { renewals } = this.options;
    renewals?.sent(sentAt);
    try {
      renewed = await this.tryAcquireOrRenew(sentAt, timeoutMs);
      renewals?.answered(clock.now());
    } catch (error) {
      renewals?.failed();
      log.warn('leader election: could not reach the API server', { error });
    }
    if (this.stopped) return;
    if (renewed) {
      this.lastRenewal = sentAt;
      // Taken, but answered so late that its time is up already: not leading on it.
      if (!this.leading && clock.now() - sentAt < this.renewDeadlineMs) {
        this.leading = true;
        log.info('leader election: started leading', { identity: this.options.identity });
        this.options.onStartedLeading();
      }
      if (this.leading) this.watchDeadline();
    }
    this.checkDeadline();
    this.schedule(this.retryPeriodMs);
  }

  /** Stops leading at the deadline of the last renewal, whatever a renewal in flight is doing. */
  private watchDeadline(): void {
    if (this.deadlineTimer) this.options.clock.clearTimeout(this.deadlineTimer);
    const dueInMs = this.lastRenewal + this.renewDeadlineMs - this.options.clock.now();
    this.deadlineTimer = this.options.clock.setTimeout(() => this.checkDeadline(), dueInMs);
  }

  private checkDeadline(): void {
    if (!this.leading || this.options.clock.now() - this.lastRenewal < this.renewDeadlineMs) return;
    this.leading = false;
    this.options.log.warn('leader election: renewal deadline passed; stopped leading');
    this.options.onStoppedLeading();
  }

  private async tryAcquireOrRenew(now: number, timeoutMs: number): Promise<boolean> {
    const { client, namespace, name, identity } = this.options;
    const path = coordinationLeasePath(namespace, name);
    const deadline = now + timeoutMs;
    const settings = () => ({ timeoutMs: Math.max(1, deadline - this.options.clock.now()) });
    let current: CoordinationLease;
    try {
      current = (await client.get(path, settings())) as CoordinationLease;
    } catch (error) {
      if (!isNotFound(error)) throw error;
      try {
        await client.create(
          coordinationLeasePath(namespace),
          coordinationLease(
            { name, namespace },
            {
              holderIdentity: identity,
              leaseDurationSeconds: this.durationSeconds,
              acquireTime: microTime(now),
              renewTime: microTime(now),
              leaseTransitions: 0,
            },
          ),
          settings(),
        );
        return true;
      } catch (createError) {
        if (isConflict(createError)) return false;
        throw createError;
      }
    }
    const spec = current.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewTime = spec.renewTime ? Date.parse(spec.renewTime) : 0;
    const expired = renewTime + (spec.leaseDurationSeconds ?? this.durationSeconds) * 1000 <= now;
    if (holder !== '' && holder !== identity && !expired) return false;
    const takingOver = holder !== identity;
    try {
      await client.replace(
        path,
        {
          ...current,
          spec: {
            ...spec,
            holderIdentity: identity,
            leaseDurationSeconds: this.durationSeconds,
            renewTime: microTime(now),
            ...(takingOver
              ? { acquireTime: microTime(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }
              : {}),
          },
        },
        settings(),
      );
      return true;
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
  }

  /** Stops trying; if leading, gives the Lease up so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.options.clock.clearTimeout(this.timer);
    if (this.deadlineTimer) this.options.clock.clearTimeout(this.deadlineTimer);
    if (!this.leading) return;
    this.leading = false;
    const { client, namespace, name, identity } = this.options;
    const path = coordinationLeasePath(namespace, name);
    try {
      const current = (await client.get(path)) as CoordinationLease;
      if (current.spec?.holderIdentity === identity) {
        await client.replace(path, {
          ...current,
          spec: { ...current.spec, holderIdentity: null, renewTime: null, acquireTime: null },
        });
      }
    } catch (error) {
      this.options.log.warn('leader election: could not release the lease', { error });
    }
  }
}
