// The soak's steady load: requests created at a target rate (iPhone 16 simulators, some physical
// iPhones), iPads kept oversubscribed (so some always wait on a full fleet) and now and then an
// iPad that must not wait (noWait: granted or Failed NO_CAPACITY at once). Each granted request is
// exec'd once through the proxy, held a moment and released (deleted); one that ended otherwise is
// let go too. Pinned requests (the partition checks') are left to their owner. Every create and
// delete is the harness's own write: tried again until it succeeds (harness-writes.ts); one given
// up is the harness's failure, and its request is left out of the product's verdicts.
import { SimlockError } from '../../api/index.js';
import {
  execThroughProxy,
  isAlreadyExists,
  isNotFound,
  KubeApiError,
  simlockPath,
  type KubeClient,
} from '../../runtime/index.js';
import { NAMESPACE } from './fleet.js';
import { HarnessError, type HarnessWrites } from './harness-writes.js';
import type { RequestKind, SoakWatch } from './watch.js';

export interface LoadOptions {
  admin: KubeClient;
  /** The soak's own writes go through it: tried until they succeed, or reported as given up. */
  harness: HarnessWrites;
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
  /** Tries of a create that failed (each was tried again, or given up: HarnessWrites.failures). */
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
  private readonly creating = new Set<Promise<void>>();
  private loops: Promise<void>[] = [];

  constructor(private readonly options: LoadOptions) {}

  start(): void {
    this.loops = [this.generate(), this.release()];
  }

  /** Stops creating; the releaser goes on until `drain()` ends. */
  stopCreating(): void {
    this.running = false;
  }

  /**
   * Waits for the creates still being tried, then (up to `timeoutMs`) until every request is let
   * go, then stops the releaser. Answers the requests still there, but those the harness gave up.
   */
  async drain(timeoutMs: number): Promise<string[]> {
    this.running = false;
    await Promise.all(this.loops.slice(0, 1));
    await Promise.all(this.creating);
    const deadline = Date.now() + timeoutMs;
    const left = () =>
      this.options.watch.requests
        .list()
        .map((object) => object.metadata.name)
        .filter((name) => this.options.watch.records.get(name)?.abandoned !== true);
    while (left().length > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 500));
    this.releasing = false;
    await Promise.all(this.loops);
    return left();
  }

  private releasing = true;

  /**
   * Creates a request the load leaves alone (the partition checks release it themselves). Throws a
   * HarnessError when the harness gave the create up.
   */
  async createPinned(name: string, capability: string): Promise<void> {
    this.pinned.add(name);
    await this.create(name, 'pinned', { requires: [capability] });
  }

  /**
   * Deletes a request, tried until it is gone (already gone counts). Throws a HarnessError
   * when the harness gives up (within `deadlineMs` if given): the request is then marked abandoned,
   * left alone, and not held against the product if it is still there at the end.
   */
  async delete(name: string, deadlineMs?: number): Promise<void> {
    try {
      await this.options.harness.write(
        `delete LeaseRequest ${name}`,
        async () => {
          try {
            await this.options.admin.delete(
              simlockPath('leaseRequest', { namespace: NAMESPACE, name }),
            );
          } catch (error) {
            if (!isNotFound(error)) throw error;
          }
        },
        deadlineMs,
      );
    } catch (error) {
      this.options.watch.record(name).abandoned = true;
      throw error;
    }
    this.options.watch.record(name).deleted = true;
    this.pinned.delete(name);
  }

  /**
   * Creates a request, tried until it is stored. While the API server or etcd restarts a try
   * fails; one whose answer was lost may still have been stored, and the next answers
   * AlreadyExists: the request was made (by the try before, which is when it was asked for).
   * Throws a HarnessError when the harness gave it up.
   */
  private async create(
    name: string,
    kind: RequestKind,
    spec: Record<string, unknown> = {},
  ): Promise<void> {
    const base =
      kind === 'physical'
        ? { platform: 'ios', physical: true }
        : kind === 'ipad' || kind === 'ipad-no-wait'
          ? { platform: 'ios', model: 'iPad Pro' }
          : { platform: 'ios', model: 'iPhone 16' };
    let triedAt = Date.now();
    let createdAt = triedAt;
    await this.options.harness.write(`create LeaseRequest ${name}`, async (retry) => {
      const before = triedAt;
      triedAt = Date.now();
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
        createdAt = triedAt;
      } catch (error) {
        if (retry && isAlreadyExists(error)) {
          createdAt = before;
          return;
        }
        this.countCreateError(error);
        throw error;
      }
    });
    this.options.watch.record(name, kind, createdAt);
    this.created++;
  }

  private countCreateError(error: unknown): void {
    this.createErrors++;
    const reason =
      error instanceof KubeApiError
        ? `${error.status} ${error.reason}: ${error.message}`
        : (error as Error).message;
    const short = reason.slice(0, 120);
    this.createErrorReasons.set(short, (this.createErrorReasons.get(short) ?? 0) + 1);
  }

  /**
   * A create of the steady load, in the background: one the harness gave up is in its failures;
   * the load goes on without it (anything else thrown is a fault of the soak itself, and ends it).
   */
  private createInBackground(name: string, kind: RequestKind): Promise<void> {
    const creating = this.create(name, kind).catch(unlessGivenUp);
    this.creating.add(creating);
    void creating.finally(() => this.creating.delete(creating));
    return creating;
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
        void this.createInBackground(`r-${sequence++}`, kind).finally(() => this.createsInFlight--);
        outstanding++;
      }
      if (this.outstanding(['ipad']) < IPAD_OUTSTANDING)
        await this.createInBackground(`ipad-${others++}`, 'ipad');
      if (Date.now() - lastNoWait > 15_000) {
        lastNoWait = Date.now();
        await this.createInBackground(`nowait-${others++}`, 'ipad-no-wait');
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
        if (record.deleted || record.abandoned) continue;
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
          .catch(unlessGivenUp)
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

/**
 * A write the harness gave up is recorded in its failures (and its request abandoned) already:
 * the load goes on. Anything else is a fault of the soak's own code, and is thrown on.
 */
function unlessGivenUp(error: unknown): void {
  if (!(error instanceof HarnessError)) throw error;
}
