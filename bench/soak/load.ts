// The soak's steady load: requests created at a target rate (iPhone 16 simulators, some physical
// iPhones), iPads kept oversubscribed (so some always wait on a full fleet) and now and then an
// iPad that must not wait (noWait: granted or Failed NO_CAPACITY at once). Each granted request is
// exec'd once through the proxy, held a moment and released (deleted); one that ended otherwise is
// let go too. Pinned requests (the partition checks') are left to their owner.
import { execThroughProxy, SimlockError } from '../../api/index.js';
import { isNotFound, KubeApiError, simlockPath, type KubeClient } from '../../runtime/index.js';
import { NAMESPACE } from './fleet.js';
import type { RequestKind, SoakWatch } from './watch.js';

export interface LoadOptions {
  admin: KubeClient;
  watch: SoakWatch;
  proxyUrl: string;
  userToken: string;
  /** Requests per minute, all kinds together. */
  perMinute: number;
  agents: number;
  /** Requests of the steady load not yet granted or failed, at most, per agent. */
  outstandingPerAgent: number;
}

/**
 * Requests of the steady load (iPhone and physical) not yet granted or failed, at most, per agent
 * by default: one is half the fleet's simulator slots, so they wait on the system rather than on
 * capacity (`--outstanding` changes it).
 */
export const OUTSTANDING_PER_AGENT = 1;
/** iPad requests not yet released: more than the fleet holds. */
const IPAD_OUTSTANDING = 10;
const IPAD_HOLD_MS = 8000;
const HOLD_MS = 300;
const EXEC_LANES = 16;
/**
 * Creates and deletes in flight at once. One at a time, the generator was its own bottleneck: a
 * create answered in 200 ms under load allowed five a second, less than asked, whatever the system
 * could grant (and the releaser likewise for deletes).
 */
const WRITE_LANES = 8;

export class SoakLoad {
  created = 0;
  createErrors = 0;
  /** Why creates failed: the API server's reason (or the client's message), with counts. */
  readonly createErrorReasons = new Map<string, number>();
  execRetries = 0;
  readonly execs = new Map<string, number>();
  private running = true;
  private readonly pinned = new Set<string>();
  private readonly execStarted = new Set<string>();
  private readonly execDone = new Set<string>();
  private execsInFlight = 0;
  private createsInFlight = 0;
  private readonly deleting = new Set<string>();
  private loops: Promise<void>[] = [];

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.loops = [this.generate(), this.release()];
  }

  /** Stops creating; the releaser goes on until `drain()` ends. */
  stopCreating(): void {
    this.running = false;
  }

  /** Waits (up to `timeoutMs`) until every request is let go, then stops the releaser. */
  async drain(timeoutMs: number): Promise<boolean> {
    this.running = false;
    const deadline = Date.now() + timeoutMs;
    while (this.options.watch.requests.list().length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 500));
    const empty = this.options.watch.requests.list().length === 0;
    this.releasing = false;
    await Promise.all(this.loops);
    return empty;
  }

  private releasing = true;

  /** Creates a request the load leaves alone (the partition checks release it themselves). */
  async createPinned(name: string, capability: string): Promise<void> {
    this.pinned.add(name);
    await this.create(name, 'pinned', { requires: [capability] });
  }

  async delete(name: string): Promise<void> {
    try {
      await this.options.admin.delete(simlockPath('leaseRequest', { namespace: NAMESPACE, name }));
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
    this.options.watch.record(name).deleted = true;
    this.pinned.delete(name);
  }

  private async create(
    name: string,
    kind: RequestKind,
    spec: Record<string, unknown> = {},
  ): Promise<void> {
    const createdAt = Date.now();
    const base =
      kind === 'physical'
        ? { platform: 'ios', physical: true }
        : kind === 'ipad' || kind === 'ipad-no-wait'
          ? { platform: 'ios', model: 'iPad Pro' }
          : { platform: 'ios', model: 'iPhone 16' };
    try {
      await this.options.admin.create(simlockPath('leaseRequest', { namespace: NAMESPACE }), {
        apiVersion: 'simlock.dev/v1alpha1',
        kind: 'LeaseRequest',
        metadata: { name },
        spec: {
          ...base,
          ...(kind === 'ipad-no-wait' ? { noWait: true } : {}),
          holder: 'soak',
          ...spec,
        },
      });
      this.options.watch.record(name, kind, createdAt);
      this.created++;
    } catch (error) {
      // While the API server or etcd restarts a create fails; one that timed out may still have
      // been stored, and the watch then records it when it shows up.
      this.createErrors++;
      const reason =
        error instanceof KubeApiError
          ? `${error.status} ${error.reason}: ${error.message}`
          : (error as Error).message;
      const short = reason.slice(0, 120);
      this.createErrorReasons.set(short, (this.createErrorReasons.get(short) ?? 0) + 1);
      if (kind === 'pinned') throw error;
    }
  }

  private outstanding(kinds: RequestKind[]): number {
    let count = 0;
    for (const object of this.options.watch.requests.list()) {
      const record = this.options.watch.records.get(object.metadata.name);
      if (!record || !kinds.includes(record.kind)) continue;
      if (kinds.includes('ipad') ? !record.deleted : record.outcomes.size === 0) count++;
    }
    return count;
  }

  private async generate(): Promise<void> {
    const started = Date.now();
    let sequence = 0;
    let others = 0;
    let lastNoWait = 0;
    while (this.running) {
      const due = ((Date.now() - started) / 60_000) * this.options.perMinute;
      // A create in flight is outstanding too (the watch has not seen it yet).
      let outstanding = this.outstanding(['iphone', 'physical']) + this.createsInFlight;
      while (
        this.running &&
        sequence < due &&
        outstanding < this.options.outstandingPerAgent * this.options.agents &&
        this.createsInFlight < WRITE_LANES
      ) {
        const kind: RequestKind = sequence % 100 < 8 ? 'physical' : 'iphone';
        this.createsInFlight++;
        void this.create(`r-${sequence++}`, kind).finally(() => this.createsInFlight--);
        outstanding++;
      }
      if (this.outstanding(['ipad']) < IPAD_OUTSTANDING)
        await this.create(`ipad-${others++}`, 'ipad');
      if (Date.now() - lastNoWait > 15_000) {
        lastNoWait = Date.now();
        await this.create(`nowait-${others++}`, 'ipad-no-wait');
      }
      // The generator keeps up with the rate; this keeps it from spinning while the API is away.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private async release(): Promise<void> {
    const { watch } = this.options;
    while (this.releasing) {
      for (const object of watch.requests.list()) {
        const name = object.metadata.name;
        if (this.pinned.has(name) || object.metadata.deletionTimestamp) continue;
        const record = watch.record(name);
        if (record.deleted) continue;
        const phase = (object.status as { phase?: string } | undefined)?.phase;
        if (phase === 'Granted') {
          if (!this.execStarted.has(name)) {
            if (this.execsInFlight < EXEC_LANES) this.exec(name, record.kind);
            continue;
          }
          const hold = record.kind === 'ipad' ? IPAD_HOLD_MS : HOLD_MS;
          if (!this.execDone.has(name) || Date.now() - (record.grantedAt ?? 0) < hold) continue;
        } else if (phase !== 'Failed' && phase !== 'Released') continue;
        if (this.deleting.has(name) || this.deleting.size >= WRITE_LANES) continue;
        this.deleting.add(name);
        void this.delete(name)
          .catch(() => undefined)
          .finally(() => {
            this.deleting.delete(name);
            this.execStarted.delete(name);
            this.execDone.delete(name);
          });
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * One exec through the proxy, tried again (up to 5 times, 2 s apart) while the proxy answers
   * UNAVAILABLE (the API server restarting); its outcome is counted (ok, exit N, or the code).
   */
  private exec(name: string, kind: RequestKind): void {
    this.execStarted.add(name);
    this.execsInFlight++;
    void this.execOnce(name, kind, 5).then((outcome) => {
      this.execs.set(outcome, (this.execs.get(outcome) ?? 0) + 1);
      this.execDone.add(name);
      this.execsInFlight--;
    });
  }

  private async execOnce(name: string, kind: RequestKind, tries: number): Promise<string> {
    const physical = kind === 'physical';
    const outcome = await execThroughProxy({
      url: this.options.proxyUrl,
      token: this.options.userToken,
      namespace: NAMESPACE,
      lease: name,
      tool: physical ? 'devicectl' : 'simctl',
      args: physical ? ['device', 'info', 'apps'] : ['launch', 'com.example.soak'],
      timeoutSeconds: 30,
      onOutput: () => undefined,
    }).then(
      ({ exitCode }) => (exitCode === 0 ? 'ok' : `exit ${exitCode}`),
      (error: unknown) => (error instanceof SimlockError ? error.code : 'error'),
    );
    if (outcome !== 'UNAVAILABLE' || tries <= 1) return outcome;
    this.execRetries++;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return this.execOnce(name, kind, tries - 1);
  }
}
