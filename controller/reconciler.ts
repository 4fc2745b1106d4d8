// The reconciler: the wiring. Informers on Workers, heartbeat Leases, LeaseRequests and simlock
// Leases feed the fleet cache (fleet-cache.ts) and the request shell (request-shell.ts), which
// runs each request's machine (request-machine.ts); walks of the waiting queue (waiting-queue.ts)
// dispatch; the lease dispatcher, the status writer and the event recorder make the writes, in the
// write queue's order (write-queue.ts). Every timer and retry is a key in a work queue.
//
// It is level-based: on start it lists everything and rebuilds its memory from the objects (a
// request's phase, its Lease and that Lease's answer), so a controller killed at any moment and
// started again loses no request and dispatches none twice (the Lease is named as its request, so a
// second create answers AlreadyExists and is adopted). Memos (refusals, cannot-serve) live in
// memory only; after a restart a worker may be asked once more, which costs one refusal.
import {
  HOLDER_SESSION_LABEL,
  takesRequests,
  WORKER_LABEL,
  REQUEST_NAMESPACE_LABEL,
  type DeviceSpec,
} from '../api/index.js';
import {
  Informer,
  TokenBucket,
  WorkQueue,
  coordinationLeasePath,
  simlockPath,
  workQueueMetrics,
  type Clock,
  type KubeClient,
  type KubeObject,
} from '../runtime/index.js';
import { AssumeCache } from './assume-cache.js';
import { CONTROLLER_DEFAULTS, type ReconcilerOptions } from './options.js';
import { EventRecorder } from './event-recorder.js';
import { GrantHistory } from './estimate/index.js';
import { FleetCache } from './fleet-cache.js';
import { LeaseDispatcher } from './lease-dispatcher.js';
import { parseLease } from './parsed-lease.js';
import { RequestShell } from './request-shell.js';
import { RequestTimers } from './request-timers.js';
import { createRoutingPolicy, type RoutingPolicy, type WorkerView } from '../api/index.js';

export type { ReconcilerOptions } from './options.js';
import { StatusWriter } from './status-writer.js';
import { phaseShown } from './status.js';
import type { TrackedRequest } from './tracked-request.js';
import { UsageHistory } from './usage-history.js';
import { UsageObserver } from './usage-observer.js';
import { UsagePublisher } from './usage-publisher.js';
import { WaitingQueue } from './waiting-queue.js';
import { WriteQueue } from './write-queue.js';

// takes-requests reads the worker only (connection, drained, catalog): any request asks alike.
const ANY_DEVICE: DeviceSpec = { platform: 'ios' };

export class Reconciler {
  private readonly client: KubeClient;
  private readonly policy: RoutingPolicy;
  private readonly fleet: FleetCache;
  private readonly assumptions: AssumeCache;
  private readonly leases: LeaseDispatcher;
  private readonly shell: RequestShell;
  private readonly status: StatusWriter;
  private readonly usage: UsageObserver;
  /** The last day of usage into a ConfigMap for the console (none: --usage-publish-interval 0). */
  private readonly usagePublisher: UsagePublisher | undefined;
  private readonly waiting: WaitingQueue;
  private readonly workerInformer: Informer;
  private readonly heartbeatInformer: Informer;
  private readonly requestInformer: Informer;
  private readonly leaseInformer: Informer;
  /** Holder sessions: the coordination.k8s.io Leases holders renew (ADR 0008). */
  private readonly sessionInformer: Informer;
  /** Requests whose timers fell due or whose writes are retried (keyed by namespace/name). */
  private readonly requestQueue: WorkQueue;
  /** One key, `walk`: walks are coalesced, and one is never run inside another. */
  private readonly walkQueue: WorkQueue<'walk'>;
  private readonly writes: WriteQueue;
  private started = false;
  private stopped = false;

  constructor(private readonly options: ReconcilerOptions) {
    const defaults = CONTROLLER_DEFAULTS;
    const { clock, log, metrics } = options;
    this.client = options.client;
    this.policy = options.policy ?? createRoutingPolicy();
    const progressRate = options.progressWritesPerSecond ?? defaults.progressWritesPerSecond;
    const writes = (this.writes = new WriteQueue({
      concurrency: options.maxConcurrentWrites ?? defaults.maxConcurrentWrites,
      progressRate: progressRate > 0 ? { qps: progressRate, burst: progressRate } : undefined,
      clock,
      now: () => clock.now(),
    }));
    const observers = workQueueMetrics(metrics.registry);
    const informer = (what: string, path: string, labelSelector?: string) =>
      new Informer(this.client, {
        path,
        labelSelector,
        onError: (error) => log.warn(`informer ${what} restarting`, { error }),
      });
    this.workerInformer = informer('workers', simlockPath('worker'), options.workerSelector);
    this.heartbeatInformer = informer('heartbeats', coordinationLeasePath(options.systemNamespace));
    const namespace = { namespace: options.watchNamespace };
    this.requestInformer = informer('lease requests', simlockPath('leaseRequest', namespace));
    // Leases live in their workers' namespaces (ADR 0034): watched in all, and a controller
    // confined to one namespace's requests watches only the Leases of that namespace's requests.
    this.leaseInformer = informer(
      'leases',
      simlockPath('lease'),
      options.watchNamespace === undefined
        ? WORKER_LABEL
        : `${WORKER_LABEL},${REQUEST_NAMESPACE_LABEL}=${options.watchNamespace}`,
    );
    this.sessionInformer = informer(
      'holder sessions',
      options.watchNamespace !== undefined
        ? coordinationLeasePath(options.watchNamespace)
        : '/apis/coordination.k8s.io/v1/leases',
      HOLDER_SESSION_LABEL,
    );

    this.requestQueue = new WorkQueue({
      name: 'requests',
      clock,
      observer: observers.observer('LeaseRequest'),
      reconcile: (key) => (this.stopped ? undefined : this.shell.reconcile(key)),
    });
    this.walkQueue = new WorkQueue({
      name: 'walk',
      clock,
      reconcile: () => {
        if (!this.stopped) this.runWalk();
      },
    });
    const walk = () => this.scheduleWalk();
    this.fleet = new FleetCache({
      clock,
      log,
      lookup: (name) => this.workerInformer.get(name),
      routingChanged: (worker) => {
        this.usage.workerChanged(worker);
        walk();
      },
      disconnected: (worker) => this.shell.workerGone(worker),
      contact: options.apiContact,
      lapseHeld: () => metrics.heartbeatLapsesHeld.inc(),
      observer: observers.observer('Worker'),
    });
    metrics.countWorkers = () => {
      const counts = new Map<string, number>();
      for (const view of this.fleet.current().views) {
        const state = takesRequests.check(view, ANY_DEVICE)?.reason ?? 'ready';
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      return counts;
    };
    const usageHistory = new UsageHistory(clock.now());
    this.usage = new UsageObserver(metrics, this.fleet, clock, usageHistory);
    const publishEveryMs = options.usagePublishIntervalMs ?? defaults.usagePublishIntervalMs;
    this.usagePublisher =
      publishEveryMs > 0
        ? new UsagePublisher({
            client: this.client,
            clock,
            log,
            namespace: options.systemNamespace,
            history: usageHistory,
            intervalMs: publishEveryMs,
            beforePublish: () => this.usage.fleetChanged(),
          })
        : undefined;
    this.assumptions = new AssumeCache(
      options.assumeGrantsForMs ?? defaults.assumeGrantsForMs,
      defaults.assumeReleasesForMs,
    );
    this.leases = new LeaseDispatcher({
      client: this.client,
      writes,
      clock,
      log,
      leases: this.leaseInformer,
      workerKnown: (name) => this.workerInformer.get(name) !== undefined,
      workerUid: (name) => this.workerInformer.get(name)?.metadata.uid as string | undefined,
      observer: observers.observer('Lease'),
      maxLeaseMs: options.maxLeaseMs ?? defaults.maxLeaseMs,
    });
    // Built in one order, each complete: a request's timers and retries (its key in the request
    // queue), then what writes its status and Events, then the shell that carries out its effects.
    const requests = new Map<string, TrackedRequest>();
    const timers = new RequestTimers(this.requestQueue, clock);
    // The last hour of grants and releases, for the estimates of waiting requests.
    const history = new GrantHistory(clock);
    this.waiting = new WaitingQueue(metrics, this.policy, { history, now: () => clock.now() });
    // Until the agent answers: its answer, or the dispatch timeout, tells the dispatch, in its
    // Event and in its status (ADR 0016, 0030).
    const dispatchEventHoldMs =
      options.dispatchEventHoldMs ?? options.dispatchTimeoutMs ?? defaults.dispatchTimeoutMs;
    const status = (this.status = new StatusWriter({
      client: this.client,
      lookup: (key) => this.requestInformer.get(key),
      writes,
      clock,
      log,
      metrics,
      reasonWriteIntervalMs: options.reasonWriteIntervalMs ?? defaults.reasonWriteIntervalMs,
      dispatchHoldMs: dispatchEventHoldMs,
      labelOf: (worker) => this.fleet.label(worker),
      writable: (request) =>
        request.life.kind !== 'releasing' && requests.get(request.key) === request,
      timers,
      requeued: () => this.waiting.changed(),
      written: (request, before, after) => this.usage.statusWritten(request, before, after),
      history,
    }));
    const events = new EventRecorder({
      client: options.eventClient ?? this.client,
      writes,
      clock,
      log,
      identity: options.identity ?? defaults.identity,
      holdMs: dispatchEventHoldMs,
      timers,
      grantEvents: grantEventBudget(
        options.grantEventsPerSecond ?? defaults.grantEventsPerSecond,
        clock,
      ),
      grantEventLeftOut: () => metrics.grantEventsLeftOut.inc(),
      // The Dispatched status is told with the dispatch's Event (ADR 0030).
      dispatchHeld: (request, until) => status.holdDispatched(request, until),
      dispatchTold: (request) => status.dispatchTold(request),
    });
    this.shell = new RequestShell({
      client: this.client,
      writes,
      clock,
      log,
      metrics,
      policy: this.policy,
      fleet: this.fleet,
      assumptions: this.assumptions,
      leases: this.leases,
      lookup: (key) => this.requestInformer.get(key),
      requests,
      timers,
      status,
      events,
      walk,
      queueChanged: () => this.waiting.changed(),
      grantedDeleting: (request) => this.usage.grantedRequestDeleting(request),
      dispatchTimeoutMs: options.dispatchTimeoutMs ?? defaults.dispatchTimeoutMs,
      grantTimeoutMs: options.grantTimeoutMs ?? defaults.grantTimeoutMs,
      limits: {
        maxLeaseMs: options.maxLeaseMs ?? defaults.maxLeaseMs,
        expiringSoonMs: options.expiringSoonMs ?? defaults.expiringSoonMs,
      },
    });
    const countWrites = (method: string) => {
      if (method !== 'GET') metrics.apiWrites.inc({ method });
    };
    this.client.observe(countWrites);
    if (options.eventClient && options.eventClient !== this.client)
      options.eventClient.observe(countWrites);
  }

  /** Starts the informers; requests are handled once Workers, heartbeats and Leases are synced. */
  async start(): Promise<void> {
    const object = (event: { type: string; object: KubeObject }) =>
      event.type === 'deleted' ? undefined : event.object;
    this.workerInformer.on((event) => {
      const name = event.object.metadata.name;
      if (event.type === 'deleted') this.leases.namespaces.workerGone(name);
      else this.leases.namespaces.workerSeen(name);
      this.fleet.refresh(name, object(event));
      if (event.type === 'deleted' && this.started) this.letGoOfOrphans();
    });
    this.heartbeatInformer.on((event) =>
      this.fleet.onHeartbeat(event.object.metadata.name, object(event)),
    );
    this.leaseInformer.on((event) => this.onLease(event.object, event.type === 'deleted'));
    this.requestInformer.on((event) =>
      this.shell.onRequest(event.object, event.type === 'deleted'),
    );
    await this.leases.namespaces.findExisting();
    this.workerInformer.start();
    this.heartbeatInformer.start();
    this.leaseInformer.start();
    await Promise.all([
      this.workerInformer.waitForSync(),
      this.heartbeatInformer.waitForSync(),
      this.leaseInformer.waitForSync(),
    ]);
    this.started = true;
    await this.usagePublisher?.start();
    this.letGoOfOrphans();
    this.requestInformer.start();
    await this.requestInformer.waitForSync();
    // A renewal is news when its renewTime moves; seen by our clock, so skew does not count.
    this.sessionInformer.on((event) => {
      if (event.type === 'deleted') return;
      const { namespace = '', name } = event.object.metadata;
      this.shell.holderRenewed(namespace, name);
    });
    this.sessionInformer.start();
    this.options.log.info('controller synced', {
      workers: this.fleet.size,
      requests: this.shell.requests.size,
    });
    this.scheduleWalk();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.usage.stop();
    await Promise.all([
      this.usagePublisher?.stop(),
      this.requestQueue.shutDown(),
      this.walkQueue.shutDown(),
      this.fleet.stop(),
      this.leases.stop(),
      this.workerInformer.stop(),
      this.heartbeatInformer.stop(),
      this.requestInformer.stop(),
      this.leaseInformer.stop(),
      this.sessionInformer.stop(),
    ]);
  }

  get ready(): boolean {
    return this.started && this.requestInformer.synced;
  }

  /**
   * For tests and the CLI's explain: what the controller holds, and the status writes it has
   * decided on and not yet made (coalesced behind a request's write timer, queued, or in flight):
   * a test that checks a walk wrote nothing waits for none to be pending, not for some time.
   */
  snapshot(): { workers: WorkerView[]; waiting: string[]; pendingWrites: number } {
    const requests = [...this.shell.requests.values()];
    const queued = Object.values(this.writes.depth).reduce((sum, depth) => sum + depth, 0);
    return {
      workers: [...this.fleet.current().views],
      waiting: requests
        .filter((request) => phaseShown(request) === 'Waiting')
        .map((request) => request.key),
      pendingWrites:
        queued +
        this.writes.inFlight +
        requests.filter((request) => request.timers.write !== undefined).length,
    };
  }

  private onLease(object: KubeObject, deleted: boolean): void {
    if (!deleted && this.started) void this.leases.letGoIfWorkerGone(object);
    const lease = parseLease(object);
    if (lease) this.shell.onLease(lease, deleted);
    else this.options.log.warn('lease unreadable; ignored', { lease: object.metadata.name });
  }

  /** Leases being deleted whose Worker is gone have no agent to let them go (lease-dispatcher.ts). */
  private letGoOfOrphans(): void {
    for (const lease of this.leaseInformer.list()) void this.leases.letGoIfWorkerGone(lease);
  }

  private scheduleWalk(): void {
    // Coalesced: every trigger in this turn of the event loop shares one walk (the queue drains
    // on the next turn, and holds the one key once).
    if (!this.started || this.stopped) return;
    this.walkQueue.add('walk');
  }

  private runWalk(): void {
    const now = this.options.clock.now();
    const { fleet, nextExpiry } = this.assumptions.fleetAt(this.fleet.current(), now);
    // Look again when the first grant assumption expires: its worker may have room again. Asked
    // on every walk (the queue keeps the earliest ask), never remembered here: a wake that comes a
    // moment early finds the assumption still counted, and asks again for what is left.
    if (nextExpiry !== undefined) this.walkQueue.addAfter('walk', nextExpiry - now + 1);
    this.waiting.walk(this.shell.requests, fleet, {
      decided: (request, outcome) =>
        this.shell.apply(
          request,
          outcome.kind === 'dispatch'
            ? { type: 'walkDispatched', worker: outcome.worker, stage: outcome.stage }
            : { type: 'walkFailed', error: outcome.error },
        ),
      waits: (request) => this.status.flush(request),
    });
  }
}

/** The grant Events' token bucket: a burst of ten seconds' worth (ADR 0028); none for 0. */
function grantEventBudget(perSecond: number, clock: Clock): TokenBucket | undefined {
  if (!(perSecond > 0)) return undefined;
  return new TokenBucket({ qps: perSecond, burst: Math.ceil(perSecond * 10) }, () => clock.now());
}
