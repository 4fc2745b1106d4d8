// The agent in the cluster: its Worker and its status (worker-writer.ts), its heartbeat
// (heartbeat.ts), and the Leases of its worker (watched in the worker's own namespace, a watch
// kube-apiserver indexes: ADR 0034), here: answered (lease-answer.ts), adopted after a restart,
// reclaimed when deleted or expired with its finalizer removed after, marked Lost or Expired, told
// of its device's health (device-health-write.ts). All of a Lease's work goes through one work
// queue keyed by the Lease (runtime/workqueue.ts): one work per Lease at a time, news that comes
// meanwhile looked at once more after, writes that fail made again after the Lease's backoff. What
// the agent owes each Lease is in one table (lease-table.ts). Each turn reads the Lease as the
// informer has it then (level-based), so a retry never writes stale news.
// Anything read off the API is parsed before use.
import { LEASE_FINALIZER, isWithdrawn, LeaseObject, leaseNamespaceOf } from '../../api/index.js';
import {
  Informer,
  isNotFound,
  isTransient,
  retryWithBackoff,
  simlockPath,
  WorkQueue,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type WorkQueueMetrics,
} from '../../runtime/index.js';
import type { AgentConfig } from '../config.js';
import type { AgentCore } from '../core.js';
import { Heartbeat } from './heartbeat.js';
import { writeDeviceHealth, type DeviceHealthWriteContext } from './device-health-write.js';
import { answerLease, type AnswerContext } from './lease-answer.js';
import { LeaseTable } from './lease-table.js';
import { WorkerWriter } from './worker-writer.js';

export interface ClusterAgentOptions {
  client: KubeClient;
  core: AgentCore;
  config: AgentConfig;
  clock: Clock;
  log: Logger;
  /** After this long without an answer, a grant writes an acknowledgement (status Pending). */
  acknowledgeAfterMs?: number;
  /** Metrics of the agent's work queues (runtime/workqueue-metrics.ts). */
  queueMetrics?: WorkQueueMetrics | undefined;
}

/** The core's lease id for a fleet Lease. */
export function leaseKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class ClusterAgent {
  /** The Leases in the worker's namespace (none there before the controller's first dispatch). */
  private readonly leases: Informer;
  private readonly heartbeat: Heartbeat;
  /** Every Lease's work, by key: answer, adopt, reclaim, the owed writes and their retries. */
  private readonly queue: WorkQueue;
  /** What this process granted and still owes each Lease. */
  private readonly table = new LeaseTable();
  private readonly worker: WorkerWriter;
  private readonly answerContext: AnswerContext;
  private readonly healthContext: DeviceHealthWriteContext;

  constructor(private readonly options: ClusterAgentOptions) {
    const { client, config, log } = options;
    this.leases = new Informer(client, {
      path: simlockPath('lease', { namespace: leaseNamespaceOf(config.name) }),
      onError: (error) => log.warn('lease informer restarting', { error }),
    });
    this.worker = new WorkerWriter(options);
    this.queue = new WorkQueue({
      name: 'leases',
      clock: options.clock,
      observer: options.queueMetrics?.observer('Lease'),
      // No cap across Leases: an answer may wait minutes for a device to be made and booted, and
      // no other Lease's answer or reclaim waits behind it (each Lease's work one at a time).
      concurrency: Infinity,
      reconcile: (key) => this.reconcile(key),
    });
    this.heartbeat = new Heartbeat({
      client,
      clock: options.clock,
      log,
      namespace: config.namespace,
      worker: config.name,
      durationSeconds: config.heartbeat.durationSeconds,
      renewEveryMs: config.heartbeat.renewEverySeconds * 1000,
    });
    this.answerContext = {
      client,
      core: options.core,
      clock: options.clock,
      log,
      acknowledgeAfterMs: options.acknowledgeAfterMs ?? 2000,
      granted: (key, uid) => this.table.update(key, { grantedUid: uid }),
      ungranted: (key) => this.table.update(key, { grantedUid: undefined }),
      wrote: (answer, basedOn) => this.leases.assume(answer, basedOn),
    };
    // A leased device that crashed: the holder is told on the Lease (device-health-write.ts).
    this.healthContext = { client, core: options.core, lease: (key) => this.leases.get(key) };
  }

  get name(): string {
    return this.options.config.name;
  }

  /** The Lease object of a granted fleet lease, if it is this worker's and granted. */
  grantedLease(namespace: string, name: string): LeaseObject | undefined {
    const object = this.leases.get(leaseKey(namespace, name));
    const lease = object ? LeaseObject.safeParse(object) : undefined;
    if (!lease?.success) return undefined;
    if (lease.data.spec.worker !== this.name || lease.data.status?.phase !== 'Granted')
      return undefined;
    if (lease.data.metadata.deletionTimestamp !== undefined) return undefined;
    return lease.data;
  }

  async start(): Promise<void> {
    const { core, log, clock } = this.options;
    // An API server restarting (or not reachable yet) is waited out; a refusal is not.
    await retryWithBackoff(() => this.worker.register(), {
      clock,
      attempts: 10,
      retryable: isTransient,
      onRetry: (error, delayMs) =>
        log.warn('could not register the Worker; retrying', { error, delayMs }),
    });
    this.worker.follow();
    core.expirations.add(({ leaseId }) => this.owe(leaseId, { expiryOwed: true }));
    core.recovery.news.add(({ leaseId }) => this.owe(leaseId, { healthOwed: true }));
    await core.start();
    this.worker.writeNow();
    this.heartbeat.start();
    // The first list is taken in two passes: Leases granted before a restart are adopted before any
    // new one is answered. In list order (by name) a new Lease could otherwise take the device of
    // an older one not adopted yet, and both would read Granted until the older was marked Lost.
    let firstList: KubeObject[] | undefined = [];
    this.leases.on((event) => {
      // Only Leases dispatched to this worker (spec.worker never changes): another's, made in
      // this namespace by hand, is not answered.
      if ((event.object.spec as { worker?: unknown } | undefined)?.worker !== this.name) return;
      if (firstList && event.type !== 'deleted') firstList.push(event.object);
      else this.queue.add(keyOf(event.object));
    });
    this.leases.start();
    await this.leases.waitForSync();
    const granted = (object: KubeObject) =>
      (object.status as { phase?: unknown } | undefined)?.phase === 'Granted';
    const listed = firstList;
    firstList = undefined;
    // The queue takes keys in the order they came, and each work reaches the granter's decisions
    // before its first await: adoptions are decided before any new answer.
    for (const object of listed.filter(granted)) this.queue.add(keyOf(object));
    for (const object of listed.filter((object) => !granted(object))) this.queue.add(keyOf(object));
    log.info('agent registered', { worker: this.name });
  }

  async stop(): Promise<void> {
    this.heartbeat.stop();
    await this.leases.stop();
    this.options.core.stop();
    // No Lease work is taken any more and no retry waits; the work in hand is not waited for (an
    // answer may be booting a device for minutes).
    void this.queue.shutDown();
    // The last view is written before the agent goes (as long as the API server takes it).
    await this.worker.stop();
  }

  // --- Leases ----------------------------------------------------------------------------------

  /** Notes a write owed to a Lease and puts it on the queue. */
  private owe(key: string, owed: { expiryOwed?: true; healthOwed?: true }): void {
    this.table.update(key, owed);
    this.queue.add(key);
  }

  /**
   * One turn of a Lease's work: the writes owed to it, then what the Lease as read now asks for.
   * A throw puts the key back after its backoff (the queue counts it).
   */
  private async reconcile(key: string): Promise<void> {
    const entry = this.table.get(key);
    const owedFailure =
      entry?.expiryOwed || entry?.healthOwed ? await this.makeOwedWrites(key) : undefined;
    const object = this.leases.get(key);
    const grantedUid = this.table.grantedUid(key);
    // Only the device of the very Lease object granted here: it is gone (or a new Lease of the same
    // name stands in its place), so its device comes back. An earlier Lease of the same name going
    // late never takes the device of the one granted now (their uids differ).
    if (grantedUid !== undefined && (object === undefined || object.metadata.uid !== grantedUid)) {
      await this.reclaimDevice(key);
    }
    if (object !== undefined) await this.onLease(key, object);
    // The Lease is gone and nothing is owed to it: its backoff goes too.
    else if (this.table.get(key) === undefined) this.queue.forget(key);
    if (owedFailure !== undefined) this.queue.requeueAfterFailure(key, owedFailure);
  }

  /** Makes the expiry and health writes owed to the Lease; answers the first failure, if any. */
  private async makeOwedWrites(key: string): Promise<unknown> {
    let failure: unknown;
    if (this.table.get(key)?.expiryOwed) {
      this.table.update(key, { expiryOwed: false });
      try {
        await this.markExpired(key);
      } catch (error) {
        // Until the controller reads Expired, it counts the lease as held: never drop this write.
        this.options.log.warn('could not mark a lease expired; retrying', { lease: key, error });
        this.table.update(key, { expiryOwed: true });
        failure = error;
      }
    }
    if (this.table.get(key)?.healthOwed) {
      this.table.update(key, { healthOwed: false });
      try {
        await writeDeviceHealth(this.healthContext, key);
      } catch (error) {
        this.table.update(key, { healthOwed: true });
        failure ??= error;
      }
    }
    return failure;
  }

  private async onLease(key: string, object: KubeObject): Promise<void> {
    const parsed = LeaseObject.safeParse(object);
    if (!parsed.success) {
      this.options.log.warn('lease unreadable; ignored', { lease: key });
      return;
    }
    const lease = parsed.data;
    if (lease.spec.worker !== this.name) return;
    if (lease.metadata.deletionTimestamp !== undefined) return this.reclaim(key, lease);
    // Withdrawn by the controller, about to be deleted: not to be answered any more.
    if (isWithdrawn(lease.metadata)) return;
    const phase = lease.status?.phase;
    const grantedUid = this.table.grantedUid(key);
    // An event older than our own grant of this very Lease (the one our finalizer patch made, with
    // no status yet) can arrive after the grant: answering it again would hit a conflict and give
    // the device back while the Lease says Granted, and another lease would get the same device.
    const grantedHere = grantedUid === lease.metadata.uid;
    if (
      (phase === undefined && !grantedHere) ||
      (phase === 'Pending' && grantedUid === undefined)
    ) {
      // Not answered yet, or acknowledged by an earlier life of this agent that died while it
      // prepared the device (nothing is held for it now): answer it afresh.
      return answerLease(this.answerContext, key, lease);
    }
    if (phase === 'Granted' && !grantedHere) return this.adopt(key, lease);
    if (phase === 'Granted') {
      // Extended (kubectl simlock extend): the controller moved spec.expiresAt; keep the device.
      const expiresAt = Date.parse(lease.spec.expiresAt);
      if (Number.isFinite(expiresAt)) this.options.core.extend(key, expiresAt);
    }
  }

  /**
   * A Lease granted by an earlier life of this agent: hold its device again, or, when that is not
   * safe (the device is gone or taken), say the lease is lost; the controller releases the request.
   */
  private async adopt(key: string, lease: LeaseObject): Promise<void> {
    const device = lease.status?.device;
    const expiresAt = Date.parse(lease.spec.expiresAt);
    const adopted =
      device !== undefined &&
      (await this.options.core.adopt(
        key,
        device,
        Number.isFinite(expiresAt) ? expiresAt : undefined,
      ));
    if (adopted) {
      this.table.update(key, { grantedUid: lease.metadata.uid ?? '' });
      this.options.log.info('adopted a lease granted before a restart', {
        lease: key,
        device: device.id,
      });
      return;
    }
    await this.markLost(key, lease, 'the agent restarted and cannot hold the device again');
  }

  /** Says the Lease is lost; a failed write is made again on the Lease's next turn. */
  private async markLost(key: string, lease: LeaseObject, message: string): Promise<void> {
    try {
      await this.options.client.patch(
        simlockPath('lease', {
          namespace: lease.metadata.namespace ?? '',
          name: lease.metadata.name,
          subresource: 'status',
        }),
        {
          status: { phase: 'Lost', message },
        },
      );
      this.queue.forget(key);
    } catch (error) {
      if (isNotFound(error)) return;
      this.options.log.warn('could not mark a lease lost; retrying', { lease: key, error });
      throw error;
    }
  }

  private async markExpired(key: string): Promise<void> {
    const object = this.leases.get(key);
    if (!object) return;
    try {
      await this.options.client.patch(
        simlockPath('lease', {
          namespace: object.metadata.namespace ?? '',
          name: object.metadata.name,
          subresource: 'status',
        }),
        {
          status: {
            phase: 'Expired',
            message: 'the lease reached its expiry; the device was reclaimed',
          },
        },
      );
      this.queue.forget(key);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** A deleted Lease: reclaim its device, then let the Lease go. */
  private async reclaim(key: string, lease: LeaseObject): Promise<void> {
    try {
      await this.reclaimDevice(key);
      const finalizers = (lease.metadata.finalizers ?? []).filter(
        (finalizer) => finalizer !== LEASE_FINALIZER,
      );
      if ((lease.metadata.finalizers ?? []).includes(LEASE_FINALIZER)) {
        await this.options.client.patch(
          simlockPath('lease', {
            namespace: lease.metadata.namespace ?? '',
            name: lease.metadata.name,
          }),
          {
            metadata: { finalizers, resourceVersion: lease.metadata.resourceVersion },
          },
        );
      }
      this.queue.forget(key);
    } catch (error) {
      if (isNotFound(error)) return;
      this.options.log.warn('reclaim failed; retrying', { lease: key, error });
      throw error;
    }
  }

  private async reclaimDevice(key: string): Promise<void> {
    if (this.table.grantedUid(key) === undefined) return;
    const outcome = await this.options.core.reclaim(key);
    this.table.update(key, { grantedUid: undefined });
    this.options.log.info('reclaimed', { lease: key, outcome });
  }
}

function keyOf(object: KubeObject): string {
  return leaseKey(object.metadata.namespace ?? '', object.metadata.name);
}
