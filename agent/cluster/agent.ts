// The agent in the cluster: its Worker and its status (worker-writer.ts), its heartbeat
// (heartbeat.ts), and the Leases of its worker (watched by spec.worker, or by label on an older
// Lease CRD: lease-selector.ts), here: answered (lease-answer.ts), adopted after a restart,
// reclaimed when deleted or expired with its finalizer removed after, marked Lost or Expired.
// One Lease's work at a time; writes that fail are retried through the lease queue (lease-queue.ts).
// Anything read off the API is parsed before use.
import { LEASE_FINALIZER, isWithdrawn, LeaseObject } from '../../api/index.js';
import {
  Informer,
  isNotFound,
  isTransient,
  retryWithBackoff,
  simlockPath,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type WorkQueueMetrics,
} from '../../runtime/index.js';
import type { AgentConfig } from '../config.js';
import type { AgentCore } from '../core.js';
import { Heartbeat } from './heartbeat.js';
import { DeviceHealthWriter } from './device-health-write.js';
import { answerLease, type AnswerContext } from './lease-answer.js';
import { LeaseQueue } from './lease-queue.js';
import { chooseLeaseSelector, fieldSelectorFor, type LeaseSelector } from './lease-selector.js';
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
  /** Made again at start with the label selector if the Lease CRD lacks the field. */
  private leases: Informer;
  private readonly heartbeat: Heartbeat;
  /** Leases being answered or reclaimed now, so one event never starts a second answer. */
  private readonly busy = new Set<string>();
  /**
   * Leases with news while busy (client-go's workqueue habit: dirty while processing): looked at
   * again, as the cache then has them, once the work in hand is done. Without it a delete seen
   * while the grant was being written was dropped, and the Lease kept our finalizer for ever.
   */
  private readonly dirty = new Set<string>();
  /** Leases this agent granted in this process, by key, with the uid of the Lease object. */
  private readonly granted = new Map<string, string>();
  private readonly worker: WorkerWriter;
  private readonly answerContext: AnswerContext;
  /** Leases whose acknowledgement falls due, or whose write failed and is retried. */
  private readonly leaseQueue: LeaseQueue;
  private readonly deviceHealth: DeviceHealthWriter;

  constructor(private readonly options: ClusterAgentOptions) {
    const { client, config, log } = options;
    this.leases = this.leaseInformer(fieldSelectorFor(config.name));
    this.worker = new WorkerWriter(options);
    this.leaseQueue = new LeaseQueue(options.clock, options.queueMetrics);
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
      granted: this.granted,
      acknowledgeAt: (key, at, write) => this.leaseQueue.acknowledgeAt(key, at, write),
    };
    // A leased device that crashed: the holder is told on the Lease (device-health-write.ts).
    this.deviceHealth = new DeviceHealthWriter({
      client,
      core: options.core,
      lease: (key) => this.leases.get(key),
      retry: (key, error) =>
        this.leaseQueue.retry(key, 'device health', error, () => this.deviceHealth.write(key)),
    });
  }

  get name(): string {
    return this.options.config.name;
  }

  private leaseInformer(selector: LeaseSelector): Informer {
    const { client, log } = this.options;
    return new Informer(client, {
      path: simlockPath('lease'),
      ...selector,
      onError: (error) => log.warn('lease informer restarting', { error }),
    });
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
    const { client, core, log, clock } = this.options;
    // An API server restarting (or not reachable yet) is waited out; a refusal is not.
    await retryWithBackoff(() => this.worker.register(), {
      clock,
      attempts: 10,
      retryable: isTransient,
      onRetry: (error, delayMs) =>
        log.warn('could not register the Worker; retrying', { error, delayMs }),
    });
    this.worker.follow();
    const selector = await chooseLeaseSelector({
      client,
      path: simlockPath('lease'),
      worker: this.name,
      clock,
      log,
    });
    if ('labelSelector' in selector) this.leases = this.leaseInformer(selector);
    core.expirations.add(({ leaseId }) => void this.markExpired(leaseId));
    core.recovery.news.add(({ leaseId }) => void this.deviceHealth.write(leaseId));
    await core.start();
    this.worker.writeNow();
    this.heartbeat.start();
    // The first list is taken in two passes: Leases granted before a restart are adopted before any
    // new one is answered. In list order (by name) a new Lease could otherwise take the device of
    // an older one not adopted yet, and both would read Granted until the older was marked Lost.
    let firstList: KubeObject[] | undefined = [];
    this.leases.on((event) => {
      if (firstList && event.type !== 'deleted') firstList.push(event.object);
      else if (event.type === 'deleted') void this.onDeleted(event.object);
      else this.onLease(event.object);
    });
    this.leases.start();
    await this.leases.waitForSync();
    const granted = (object: KubeObject) =>
      (object.status as { phase?: unknown } | undefined)?.phase === 'Granted';
    const listed = firstList;
    firstList = undefined;
    for (const object of listed.filter(granted)) this.onLease(object);
    for (const object of listed.filter((object) => !granted(object))) this.onLease(object);
    log.info('agent registered', { worker: this.name });
  }

  async stop(): Promise<void> {
    this.heartbeat.stop();
    await this.leases.stop();
    this.options.core.stop();
    await this.leaseQueue.shutDown();
    // The last view is written before the agent goes (as long as the API server takes it).
    await this.worker.stop();
  }

  // --- Leases ----------------------------------------------------------------------------------

  private onLease(object: KubeObject): void {
    const parsed = LeaseObject.safeParse(object);
    const key = leaseKey(object.metadata.namespace ?? '', object.metadata.name);
    if (!parsed.success) {
      this.options.log.warn('lease unreadable; ignored', { lease: key });
      return;
    }
    const lease = parsed.data;
    if (lease.spec.worker !== this.name) return;
    if (lease.metadata.deletionTimestamp !== undefined) {
      void this.reclaim(key, lease);
      return;
    }
    // Withdrawn by the controller, about to be deleted: not to be answered any more.
    if (isWithdrawn(lease.metadata)) return;
    const phase = lease.status?.phase;
    // An event older than our own grant of this very Lease (the one our finalizer patch made, with
    // no status yet) can arrive after the grant: answering it again would hit a conflict and give
    // the device back while the Lease says Granted, and another lease would get the same device.
    const grantedHere = this.granted.get(key) === lease.metadata.uid;
    if ((phase === undefined && !grantedHere) || (phase === 'Pending' && !this.granted.has(key))) {
      // Not answered yet, or acknowledged by an earlier life of this agent that died while it
      // prepared the device (nothing is held for it now): answer it afresh.
      void this.answer(key, lease);
    } else if (phase === 'Granted' && this.granted.get(key) !== lease.metadata.uid) {
      void this.adopt(key, lease);
    } else if (phase === 'Granted') {
      // Extended (kubectl simlock extend): the controller moved spec.expiresAt; keep the device.
      const expiresAt = Date.parse(lease.spec.expiresAt);
      if (Number.isFinite(expiresAt)) this.options.core.extend(key, expiresAt);
    }
  }

  /** Takes a Lease's work in hand, or, if it is in hand already, notes the news for after. */
  private claim(key: string): boolean {
    if (this.busy.has(key)) {
      this.dirty.add(key);
      return false;
    }
    this.busy.add(key);
    return true;
  }

  /** Done with the work (client-go's Done): news that came meanwhile is looked at now. */
  private done(key: string): void {
    this.busy.delete(key);
    if (!this.dirty.delete(key)) return;
    const current = this.leases.get(key);
    if (current) this.onLease(current);
  }

  /**
   * A Lease granted by an earlier life of this agent: hold its device again, or, when that is not
   * safe (the device is gone or taken), say the lease is lost; the controller releases the request.
   */
  private async adopt(key: string, lease: LeaseObject): Promise<void> {
    if (!this.claim(key)) return;
    try {
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
        this.granted.set(key, lease.metadata.uid ?? '');
        this.options.log.info('adopted a lease granted before a restart', {
          lease: key,
          device: device.id,
        });
        return;
      }
    } finally {
      this.done(key);
    }
    await this.markLost(key, lease, 'the agent restarted and cannot hold the device again');
  }

  private async answer(key: string, lease: LeaseObject): Promise<void> {
    if (!this.claim(key)) return;
    try {
      await answerLease(this.answerContext, key, lease);
    } finally {
      this.done(key);
    }
  }

  private async markLost(key: string, lease: LeaseObject, message: string): Promise<void> {
    if (!this.claim(key)) return;
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
      this.leaseQueue.forget(key);
    } catch (error) {
      if (!isNotFound(error)) {
        this.options.log.warn('could not mark a lease lost; retrying', { lease: key, error });
        this.leaseQueue.retry(key, 'mark lost', error, () => this.markLost(key, lease, message));
      }
    } finally {
      this.done(key);
    }
  }

  private async markExpired(leaseId: string): Promise<void> {
    const object = this.leases.get(leaseId);
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
      this.leaseQueue.forget(leaseId);
    } catch (error) {
      // Until the controller reads Expired, it counts the lease as held: never drop this write.
      if (isNotFound(error)) return;
      this.options.log.warn('could not mark a lease expired; retrying', { lease: leaseId, error });
      this.leaseQueue.retry(leaseId, 'mark expired', error, () => this.markExpired(leaseId));
    }
  }

  private async onDeleted(object: KubeObject): Promise<void> {
    const key = leaseKey(object.metadata.namespace ?? '', object.metadata.name);
    // Only the device of this very Lease: an earlier Lease of the same name going late must not
    // take the device of the one being granted now.
    if (this.granted.get(key) === (object.metadata.uid ?? '')) await this.reclaimDevice(key);
  }

  /** A deleted Lease: reclaim its device, then let the Lease go. */
  private async reclaim(key: string, lease: LeaseObject): Promise<void> {
    if (!this.claim(key)) return;
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
      this.leaseQueue.forget(key);
    } catch (error) {
      if (!isNotFound(error)) {
        this.options.log.warn('reclaim failed; retrying', { lease: key, error });
        this.leaseQueue.retry(key, 'look again', error, () => {
          const current = this.leases.get(key);
          if (current) this.onLease(current);
          return Promise.resolve();
        });
      }
    } finally {
      this.done(key);
    }
  }

  private async reclaimDevice(key: string): Promise<void> {
    if (!this.granted.has(key)) return;
    const outcome = await this.options.core.reclaim(key);
    this.granted.delete(key);
    this.options.log.info('reclaimed', { lease: key, outcome });
  }
}
