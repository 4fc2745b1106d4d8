// The reconciler: informers on Workers, heartbeat Leases, LeaseRequests and simlock Leases; an
// in-memory queue of waiting requests; the walk; dispatch; outcomes; status writes.
//
// It is level-based: on start it lists everything and rebuilds its memory from the objects (a
// request's phase, its Lease and that Lease's answer), so a controller killed at any moment and
// started again loses no request and dispatches none twice (the Lease is named as its request, so a
// second create answers AlreadyExists and is adopted). Memos (refusals, cannot-serve) live in
// memory only; after a restart a worker may be asked once more, which costs one refusal.
import {
  API_VERSION,
  GrantedDevice,
  LeaseRequestObject,
  LeaseStatus,
  LEASE_FINALIZER,
  LEASE_WITHDRAWN_ANNOTATION,
  REQUEST_FINALIZER,
  RESOURCES,
  WORKER_LABEL,
  WorkerObject,
  canonicalJson,
  parseRefusal,
  type DeviceSpec,
  type ErrorBody,
  type LeaseRequestSpec,
  type LeaseRequestStatus,
  type WorkerReason,
} from '../api/index.js';
import {
  Informer,
  coordinationLeasePath,
  eventsPath,
  isAlreadyExists,
  isConflict,
  isNotFound,
  simlockPath,
  type Clock,
  type KubeClient,
  type KubeObject,
  type Logger,
  type TimerHandle,
} from '../runtime/index.js';
import {
  assumeDispatches,
  viewShowsFreed,
  viewShowsLeased,
  type PendingDispatch,
  type ReleasedDevice,
} from './assume.js';
import { emptyMemos, type RequestMemos } from './memos.js';
import type { ControllerMetrics } from './metrics.js';
import { createRoutingPolicy, type RoutingPolicy, type WorkerView } from './routing/index.js';
import {
  desiredStatus,
  setCondition,
  statusMergePatch,
  urgentPart,
  type RequestState,
} from './status.js';
import {
  buildWorker,
  parseHeartbeat,
  sameRouting,
  ViewRevisions,
  type Heartbeat,
  type KnownWorker,
} from './views.js';
import { walk, type Fleet, type WaitingRequest } from './walk.js';
import { WriteQueue } from './write-queue.js';

export interface ReconcilerOptions {
  client: KubeClient;
  /**
   * Events go through this client when given: with a rate limit of its own (kube-scheduler's
   * event client does the same), a burst of Events never holds back a dispatch or a status write.
   */
  eventClient?: KubeClient | undefined;
  clock: Clock;
  log: Logger;
  metrics: ControllerMetrics;
  policy?: RoutingPolicy;
  /** Where the agents' heartbeat Leases live. */
  systemNamespace: string;
  /** Only LeaseRequests and Leases in this namespace; every namespace when absent. */
  watchNamespace?: string | undefined;
  /** Only Workers with these labels (a label selector); every Worker when absent. */
  workerSelector?: string | undefined;
  /** How long an agent may take to answer a Lease before that worker counts as disconnected. */
  dispatchTimeoutMs?: number;
  /** Once the agent has acknowledged a Lease (status Pending: a cold boot), how long it may take. */
  grantTimeoutMs?: number;
  /** Reason-only status changes are written at most this often per request. */
  reasonWriteIntervalMs?: number;
  /**
   * A dispatch's Event is held this long, so a grant within it is one Event (ADR 0005); 0 writes
   * `Dispatched to <worker> (<stage>)` at once for every dispatch. 1000 by default.
   */
  dispatchEventHoldMs?: number;
  /** Writes in flight at once (see write-queue.ts); 32 by default. */
  maxConcurrentWrites?: number;
  /**
   * Progress writes (a waiting request's reasons and position) per second, all requests together;
   * 100 by default, 0: no limit but the concurrency. Dispatches and outcomes are never held by it.
   */
  progressWritesPerSecond?: number;
  /** Name of this controller in Events. */
  identity?: string;
  /**
   * A grant counts against its worker's view until the view shows it, or this long (the agent
   * reports its view debounced); see assume.ts.
   */
  assumeGrantsForMs?: number;
}

interface TrackedRequest extends RequestState {
  key: string;
  namespace: string;
  name: string;
  uid: string;
  spec: LeaseRequestSpec;
  createdAt: number;
  memos: RequestMemos;
  lastCannotServe?: { code: string; message: string } | undefined;
  stage?: string | undefined;
  /**
   * The view revision of the worker the current dispatch was routed on: a refusal or a silence is
   * remembered against it (memos.ts says why that one, not the revision the answer arrived at).
   */
  routedRevision?: number | undefined;
  /** The agent acknowledged the current dispatch (status Pending). */
  acknowledged?: boolean;
  /** Our watch has delivered the current dispatch's Lease (its dispatch timer runs from then). */
  leaseSeen?: boolean;
  /** When this process saw the grant (assumed in its worker's view for a while: assume.ts). */
  grantedAt?: number | undefined;
  /** The Lease of an earlier dispatch is being deleted; no new dispatch until it is gone. */
  leaseDeleting: boolean;
  /**
   * The uid of the current dispatch's Lease once known, and whether its create is in flight. A
   * Lease deleted outright is gone before its DELETED event arrives, so the request may already be
   * dispatched again when it does: such late news of an earlier Lease must not touch the new one.
   */
  leaseUid?: string | undefined;
  creatingLease: boolean;
  deleting: boolean;
  hasFinalizer: boolean;
  timers: {
    wait?: TimerHandle;
    dispatch?: TimerHandle;
    expiry?: TimerHandle;
    write?: TimerHandle;
    dispatchEvent?: TimerHandle;
  };
  /**
   * The current dispatch's Event, held for a moment: a grant that comes first records both in one
   * Event (ADR 0005); anything else records it before its own.
   */
  dispatchEvent?: string | undefined;
  /** The status last known to be on the server, and when reasons were last written. */
  written?: Record<string, unknown> | undefined;
  lastReasonWriteAt: number;
  /**
   * Until then only an outcome is written at once: a request that waits or is dispatched only
   * for a moment (most of a burst: one dispatch per worker per walk) goes from Pending straight to
   * Granted in one write, instead of three.
   */
  settleUntil: number;
}

export class Reconciler {
  private readonly client: KubeClient;
  private readonly eventClient: KubeClient;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics;
  private readonly policy: RoutingPolicy;
  private readonly dispatchTimeoutMs: number;
  private readonly grantTimeoutMs: number;
  private readonly reasonWriteIntervalMs: number;
  private readonly dispatchEventHoldMs: number;
  private readonly identity: string;
  private readonly writes: WriteQueue;
  private readonly assumeGrantsForMs: number;
  /** Views with the controller's pending dispatches in them, by worker, while they hold. */
  private readonly assumed = new Map<
    string,
    { base: WorkerView; signature: string; view: WorkerView }
  >();
  private assumeTimer: { at: number; handle: TimerHandle } | undefined;
  /** Devices whose Lease the agent let go of (reclaimed), by worker, and when: assume.ts. */
  private readonly released = new Map<string, (ReleasedDevice & { at: number })[]>();

  private readonly workerInformer: Informer;
  /** Every tracked request in queue order (queuedAt, then key); undefined: to be sorted again. */
  private queueOrder: TrackedRequest[] | undefined;
  /** Leases whose Worker is being looked up (see letGoIfWorkerGone). */
  private readonly orphanChecks = new Set<string>();
  private readonly heartbeatInformer: Informer;
  private readonly requestInformer: Informer;
  private readonly leaseInformer: Informer;

  private readonly workers = new Map<string, KnownWorker>();
  private readonly revisions = new ViewRevisions();
  private readonly heartbeats = new Map<string, Heartbeat>();
  private readonly lapseTimers = new Map<string, TimerHandle>();
  private fleet: Fleet | undefined;
  private readonly requests = new Map<string, TrackedRequest>();

  private started = false;
  private stopped = false;
  private walkScheduled = false;

  constructor(private readonly options: ReconcilerOptions) {
    this.client = options.client;
    this.eventClient = options.eventClient ?? options.client;
    this.clock = options.clock;
    this.log = options.log;
    this.metrics = options.metrics;
    this.policy = options.policy ?? createRoutingPolicy();
    this.dispatchTimeoutMs = options.dispatchTimeoutMs ?? 10_000;
    this.grantTimeoutMs = options.grantTimeoutMs ?? 600_000;
    this.reasonWriteIntervalMs = options.reasonWriteIntervalMs ?? 1000;
    this.dispatchEventHoldMs = options.dispatchEventHoldMs ?? 1000;
    this.identity = options.identity ?? 'simlock-controller';
    this.assumeGrantsForMs = options.assumeGrantsForMs ?? 3000;
    const progressRate = options.progressWritesPerSecond ?? 100;
    this.writes = new WriteQueue({
      concurrency: options.maxConcurrentWrites ?? 32,
      progressRate: progressRate > 0 ? { qps: progressRate, burst: progressRate } : undefined,
    });
    const onError = (what: string) => (error: unknown) =>
      this.log.warn(`informer ${what} restarting`, { error });
    this.workerInformer = new Informer(this.client, {
      path: simlockPath('worker'),
      labelSelector: options.workerSelector,
      onError: onError('workers'),
    });
    this.heartbeatInformer = new Informer(this.client, {
      path: coordinationLeasePath(options.systemNamespace),
      onError: onError('heartbeats'),
    });
    this.requestInformer = new Informer(this.client, {
      path: simlockPath('leaseRequest', { namespace: options.watchNamespace }),
      onError: onError('lease requests'),
    });
    this.leaseInformer = new Informer(this.client, {
      path: simlockPath('lease', { namespace: options.watchNamespace }),
      labelSelector: WORKER_LABEL,
      onError: onError('leases'),
    });
    const countWrites = (method: string) => {
      if (method !== 'GET') this.metrics.apiWrites.inc({ method });
    };
    this.client.observe(countWrites);
    if (this.eventClient !== this.client) this.eventClient.observe(countWrites);
  }

  /** Starts the informers; requests are handled once Workers, heartbeats and Leases are synced. */
  async start(): Promise<void> {
    this.workerInformer.on((event) =>
      this.onWorker(
        event.type === 'deleted' ? undefined : event.object,
        event.object.metadata.name,
      ),
    );
    this.heartbeatInformer.on((event) =>
      this.onHeartbeat(
        event.type === 'deleted' ? undefined : event.object,
        event.object.metadata.name,
      ),
    );
    this.leaseInformer.on((event) => this.onLease(event.object, event.type === 'deleted'));
    this.requestInformer.on((event) => this.onRequest(event.object, event.type === 'deleted'));
    this.workerInformer.start();
    this.heartbeatInformer.start();
    this.leaseInformer.start();
    await Promise.all([
      this.workerInformer.waitForSync(),
      this.heartbeatInformer.waitForSync(),
      this.leaseInformer.waitForSync(),
    ]);
    this.started = true;
    for (const lease of this.leaseInformer.list()) void this.letGoIfWorkerGone(lease);
    this.requestInformer.start();
    await this.requestInformer.waitForSync();
    this.log.info('controller synced', {
      workers: this.workers.size,
      requests: this.requests.size,
    });
    this.scheduleWalk();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const request of this.requests.values()) this.clearTimers(request);
    for (const timer of this.lapseTimers.values()) this.clock.clearTimeout(timer);
    if (this.assumeTimer) this.clock.clearTimeout(this.assumeTimer.handle);
    await Promise.all([
      this.workerInformer.stop(),
      this.heartbeatInformer.stop(),
      this.requestInformer.stop(),
      this.leaseInformer.stop(),
    ]);
  }

  get ready(): boolean {
    return this.started && this.requestInformer.synced;
  }

  // ------------------------------------------------------------------------------------------
  // Workers and heartbeats

  private onWorker(object: KubeObject | undefined, name: string): void {
    this.refreshWorker(name, object);
    if (!object && this.started) {
      for (const lease of this.leaseInformer.list()) void this.letGoIfWorkerGone(lease);
    }
  }

  private onHeartbeat(object: KubeObject | undefined, leaseName: string): void {
    if (!leaseName.startsWith('worker-')) return;
    const worker = leaseName.slice('worker-'.length);
    const heartbeat = object ? parseHeartbeat(object) : undefined;
    if (heartbeat) this.heartbeats.set(worker, heartbeat);
    else this.heartbeats.delete(worker);
    const workerObject = this.workerInformer.get(worker);
    if (workerObject) this.refreshWorker(worker, workerObject);
  }

  private refreshWorker(name: string, object: KubeObject | undefined): void {
    const previous = this.workers.get(name);
    if (!object) {
      if (!previous) return;
      this.workers.delete(name);
      this.revisions.forget(name);
      this.fleet = undefined;
      this.scheduleWalk();
      return;
    }
    const parsed = WorkerObject.safeParse({ ...object, status: undefined });
    if (!parsed.success) {
      this.log.warn('worker object unreadable', { worker: name });
      return;
    }
    const next = buildWorker(
      { metadata: parsed.data.metadata, spec: parsed.data.spec, status: object.status },
      this.heartbeats.get(name),
      this.clock.now(),
    );
    this.workers.set(name, next);
    this.revisions.observe(name, next.key);
    this.scheduleLapse(name, next.lapsesAt);
    if (previous?.view.connection === 'connected' && next.view.connection !== 'connected') {
      // A worker that went away will not answer what was dispatched to it and not yet granted.
      for (const request of this.requests.values()) {
        if (request.phase === 'Dispatched' && request.worker === name) {
          this.giveUpOnDispatch(request, 'the worker disconnected before it answered');
        }
      }
    }
    if (!sameRouting(previous, next)) {
      this.fleet = undefined;
      this.scheduleWalk();
    }
  }

  /** A fresh heartbeat lapses at a known moment: look again then, instead of polling. */
  private scheduleLapse(name: string, lapsesAt: number | undefined): void {
    const existing = this.lapseTimers.get(name);
    if (existing) this.clock.clearTimeout(existing);
    this.lapseTimers.delete(name);
    if (lapsesAt === undefined) return;
    this.lapseTimers.set(
      name,
      this.clock.setTimeout(
        () => {
          this.lapseTimers.delete(name);
          this.refreshWorker(name, this.workerInformer.get(name));
        },
        lapsesAt - this.clock.now() + 1,
      ),
    );
  }

  private currentFleet(): Fleet {
    if (!this.fleet) {
      const known = [...this.workers.values()].sort((a, b) =>
        a.view.name < b.view.name ? -1 : a.view.name > b.view.name ? 1 : 0,
      );
      this.fleet = {
        views: known.map((worker) => worker.view),
        viewRevisions: new Map(
          known.map((worker) => [worker.view.name, this.revisions.get(worker.view.name) ?? 0]),
        ),
      };
    }
    return this.fleet;
  }

  /**
   * The fleet routing walks: each view with the dispatches this controller made to that worker and
   * the view does not show yet (in flight, or granted a moment ago). See assume.ts.
   */
  private routingFleet(): Fleet {
    const fleet = this.currentFleet();
    const now = this.clock.now();
    const pending = new Map<string, PendingDispatch[]>();
    // What each worker's adjustment is made of, as a short string: the same string, the same
    // adjusted view (a request's spec never changes, so its key stands for it).
    const signatures = new Map<string, string>();
    let nextExpiry = Number.POSITIVE_INFINITY;
    for (const request of this.requests.values()) {
      const worker = request.worker;
      if (worker === undefined || request.deleting) continue;
      let dispatch: PendingDispatch | undefined;
      if (request.phase === 'Dispatched') dispatch = { spec: request.spec };
      else if (request.phase === 'Granted' && request.grantedAt !== undefined) {
        const until = request.grantedAt + this.assumeGrantsForMs;
        const view = this.workers.get(worker)?.view;
        const deviceId = request.device?.id;
        if (until > now && view && !(deviceId && viewShowsLeased(view, deviceId))) {
          dispatch = { spec: request.spec, deviceId };
          nextExpiry = Math.min(nextExpiry, until);
        }
      }
      if (dispatch) {
        const list = pending.get(worker);
        if (list) list.push(dispatch);
        else pending.set(worker, [dispatch]);
        signatures.set(
          worker,
          `${signatures.get(worker) ?? ''}${request.key}:${dispatch.deviceId ?? ''};`,
        );
      }
    }
    const freed = new Map<string, ReleasedDevice[]>();
    for (const [worker, devices] of this.released) {
      const view = this.workers.get(worker)?.view;
      const current = devices.filter(
        (device) =>
          device.at + this.assumeGrantsForMs > now &&
          view !== undefined &&
          !viewShowsFreed(view, device.deviceId),
      );
      if (current.length === 0) this.released.delete(worker);
      else {
        this.released.set(worker, current);
        freed.set(
          worker,
          current.map(({ deviceId, physical }) => ({ deviceId, physical })),
        );
      }
    }
    // Look again when the first grant assumption lapses: its worker may have room again.
    if (Number.isFinite(nextExpiry) && !(this.assumeTimer && this.assumeTimer.at <= nextExpiry)) {
      if (this.assumeTimer) this.clock.clearTimeout(this.assumeTimer.handle);
      this.assumeTimer = {
        at: nextExpiry,
        handle: this.clock.setTimeout(
          () => {
            this.assumeTimer = undefined;
            this.scheduleWalk();
          },
          nextExpiry - now + 1,
        ),
      };
    }
    if (pending.size === 0 && freed.size === 0) {
      this.assumed.clear();
      return fleet;
    }
    const views = fleet.views.map((view) => {
      const mine = pending.get(view.name) ?? [];
      const given = freed.get(view.name) ?? [];
      if (mine.length + given.length === 0) {
        this.assumed.delete(view.name);
        return view;
      }
      // The same view and the same dispatches: the same object, so routing's memo holds.
      const signature = `${signatures.get(view.name) ?? ''}|${given
        .map((device) => `${device.deviceId}:${String(device.physical)}`)
        .join(';')}`;
      const known = this.assumed.get(view.name);
      if (known && known.base === view && known.signature === signature) return known.view;
      const adjusted = assumeDispatches(view, mine, given);
      this.assumed.set(view.name, { base: view, signature, view: adjusted });
      return adjusted;
    });
    return { views, viewRevisions: fleet.viewRevisions };
  }

  // ------------------------------------------------------------------------------------------
  // LeaseRequests

  private onRequest(object: KubeObject, deleted: boolean): void {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const tracked = this.requests.get(key);
    if (deleted) {
      if (tracked) this.forget(tracked);
      return;
    }
    const parsed = LeaseRequestObject.safeParse(object);
    if (!parsed.success) {
      this.log.warn('lease request unreadable', {
        request: key,
        issues: parsed.error.issues.slice(0, 3),
      });
      return;
    }
    const { metadata, spec, status } = parsed.data;
    const finalizers = metadata.finalizers ?? [];
    const request =
      tracked ??
      this.track({
        key,
        namespace: metadata.namespace ?? 'default',
        name: metadata.name,
        uid: metadata.uid ?? '',
        spec,
        createdAt: Date.parse(String(metadata.creationTimestamp ?? '')) || this.clock.now(),
        status,
      });
    request.hasFinalizer = finalizers.includes(REQUEST_FINALIZER);
    request.generation = metadata.generation;
    if (metadata.deletionTimestamp !== undefined) {
      if (!request.deleting) {
        request.deleting = true;
        void this.release(request);
      }
      return;
    }
    if (!tracked) this.recover(request);
  }

  private track(input: {
    key: string;
    namespace: string;
    name: string;
    uid: string;
    spec: LeaseRequestSpec;
    createdAt: number;
    status: LeaseRequestStatus | undefined;
  }): TrackedRequest {
    const status = input.status;
    const request: TrackedRequest = {
      key: input.key,
      namespace: input.namespace,
      name: input.name,
      uid: input.uid,
      spec: input.spec,
      createdAt: input.createdAt,
      phase: status?.phase ?? 'Pending',
      queuedAt: status?.queuedAt ? Date.parse(status.queuedAt) : undefined,
      position: status?.position,
      workers: status?.workers ?? [],
      worker: status?.worker,
      lease: status?.lease,
      device: status?.device,
      error: status?.error,
      conditions: status?.conditions ?? [],
      memos: emptyMemos(),
      leaseDeleting: false,
      creatingLease: false,
      deleting: false,
      hasFinalizer: false,
      timers: {},
      written: status,
      lastReasonWriteAt: 0,
      settleUntil: 0,
    };
    this.requests.set(request.key, request);
    this.queueOrder = undefined;
    return request;
  }

  /** Picks a request up from whatever state the API holds it in (first sight, or after a restart). */
  private recover(request: TrackedRequest): void {
    const lease = this.leaseInformer.get(request.key);
    switch (request.phase) {
      case 'Pending':
        if (lease) {
          // Dispatched by an earlier incarnation that died before it wrote the phase.
          this.adoptLease(request, lease);
        } else {
          void this.admit(request);
        }
        return;
      case 'Waiting':
        if (lease) this.adoptLease(request, lease);
        else this.enqueue(request);
        return;
      case 'Dispatched':
        if (lease) this.adoptLease(request, lease);
        else this.requeue(request);
        return;
      case 'Granted':
        if (lease) this.onLease(lease, false);
        else this.finish(request, 'Released', undefined, 'LeaseGone', 'its Lease no longer exists');
        return;
      case 'Failed':
      case 'Released':
        if (lease) void this.deleteLease(request);
        return;
    }
  }

  private adoptLease(request: TrackedRequest, lease: KubeObject): void {
    const worker = (lease.spec as { worker?: unknown } | undefined)?.worker;
    request.leaseUid = leaseUidOf(lease);
    request.phase = 'Dispatched';
    request.worker = typeof worker === 'string' ? worker : undefined;
    // Routed by an earlier process, on a view this one may never have seen.
    request.routedRevision = undefined;
    request.workers = [];
    this.startDispatchTimer(request);
    this.onLease(lease, false);
    this.flush(request);
  }

  private async admit(request: TrackedRequest): Promise<void> {
    if (!(await this.ensureFinalizer(request))) return;
    const assessment = this.policy.assess(request.spec, this.currentFleet().views);
    if (assessment.kind === 'fail') {
      this.fail(request, {
        code: assessment.code,
        message: assessment.message,
        ...(assessment.details ? { details: { ...assessment.details } } : {}),
      });
      return;
    }
    request.queuedAt = this.clock.now();
    this.queueOrder = undefined;
    this.enqueue(request);
  }

  private async ensureFinalizer(request: TrackedRequest): Promise<boolean> {
    if (request.hasFinalizer) return true;
    const current = this.requestInformer.get(request.key);
    const finalizers = ((current?.metadata.finalizers as string[] | undefined) ?? []).filter(
      (name) => name !== REQUEST_FINALIZER,
    );
    try {
      await this.writes.run('bookkeeping', () =>
        this.client.patch(
          simlockPath('leaseRequest', { namespace: request.namespace, name: request.name }),
          {
            metadata: {
              finalizers: [...finalizers, REQUEST_FINALIZER],
              resourceVersion: current?.metadata.resourceVersion,
            },
          },
        ),
      );
      request.hasFinalizer = true;
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      this.log.warn('could not add the release finalizer; retrying', {
        request: request.key,
        error,
      });
      this.clock.setTimeout(() => {
        if (this.requests.get(request.key) === request && !request.deleting)
          void this.admit(request);
      }, 1000);
      return false;
    }
  }

  private enqueue(request: TrackedRequest): void {
    if (request.phase !== 'Waiting')
      request.settleUntil = this.clock.now() + this.reasonWriteIntervalMs;
    request.phase = 'Waiting';
    if (request.queuedAt === undefined) {
      request.queuedAt = this.clock.now();
      this.queueOrder = undefined;
    }
    request.worker = undefined;
    request.stage = undefined;
    if (!request.spec.noWait && !request.timers.wait) {
      const deadline = request.createdAt + request.spec.waitTimeoutSeconds * 1000;
      request.timers.wait = this.clock.setTimeout(
        () => this.onWaitTimeout(request),
        deadline - this.clock.now(),
      );
    }
    this.scheduleWalk();
  }

  /** Back to the queue after a dispatch that came to nothing; past its deadline, it times out. */
  private requeue(request: TrackedRequest): void {
    this.clearTimer(request, 'dispatch');
    request.lease = undefined;
    request.leaseUid = undefined;
    if (
      !request.spec.noWait &&
      this.clock.now() >= request.createdAt + request.spec.waitTimeoutSeconds * 1000
    ) {
      this.failTimeout(request);
      return;
    }
    this.enqueue(request);
  }

  private onWaitTimeout(request: TrackedRequest): void {
    request.timers.wait = undefined;
    if (
      this.requests.get(request.key) !== request ||
      request.phase !== 'Waiting' ||
      request.deleting
    )
      return;
    this.failTimeout(request);
  }

  private failTimeout(request: TrackedRequest): void {
    const waited = request.spec.waitTimeoutSeconds;
    this.fail(request, {
      code: 'TIMEOUT',
      message: `no worker could take it within ${waited}s (${request.workers.length > 0 ? `last reasons: ${summaryOf(request)}` : 'no known workers'})`,
    });
  }

  // ------------------------------------------------------------------------------------------
  // The walk

  private scheduleWalk(): void {
    if (!this.started || this.walkScheduled || this.stopped) return;
    this.walkScheduled = true;
    // Coalesced: every trigger in this turn of the event loop shares one walk.
    setImmediate(() => {
      this.walkScheduled = false;
      if (!this.stopped) this.runWalk();
    });
  }

  private runWalk(): void {
    const started = performance.now();
    // Sorting thousands of requests on every walk was most of a walk's time in a burst; the order
    // changes only when a request comes, goes, or is queued.
    this.queueOrder ??= [...this.requests.values()].sort(
      (a, b) =>
        (a.queuedAt ?? 0) - (b.queuedAt ?? 0) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
    );
    const queue = this.queueOrder.filter(
      (request) => request.phase === 'Waiting' && !request.deleting,
    );
    const waiting: WaitingRequest[] = queue.map((request) => ({
      key: request.key,
      spec: request.spec,
      memos: request.memos,
      holdDispatch: request.leaseDeleting,
      lastCannotServe: request.lastCannotServe,
    }));
    const outcomes = walk(waiting, this.routingFleet(), this.policy);
    this.metrics.walks.inc();
    this.metrics.walkSeconds.observe((performance.now() - started) / 1000);

    // Apply in queue order: dispatches and failures leave the queue; the rest get their reasons
    // and their new position.
    let position = 0;
    const reasonCounts = new Map<string, number>();
    for (const request of queue) {
      const outcome = outcomes.get(request.key);
      if (!outcome) continue;
      if (outcome.kind === 'dispatch') void this.dispatch(request, outcome.worker, outcome.stage);
      else if (outcome.kind === 'fail') this.fail(request, outcome.error);
      else {
        position++;
        for (const entry of outcome.workers)
          reasonCounts.set(entry.reason, (reasonCounts.get(entry.reason) ?? 0) + 1);
        // Most waiting requests come out of a walk as they went in: skip them cheaply, without
        // building their status to compare it (thousands of requests × a reason per worker).
        if (request.position === position && sameReasons(request.workers, outcome.workers))
          continue;
        request.workers = outcome.workers;
        request.position = position;
        this.flush(request);
      }
    }
    this.metrics.queueLength.set(position);
    this.metrics.waitingByReason.reset();
    for (const [reason, count] of reasonCounts) this.metrics.waitingByReason.set({ reason }, count);
  }

  private async dispatch(request: TrackedRequest, worker: string, stage: string): Promise<void> {
    const now = this.clock.now();
    request.settleUntil = now + this.reasonWriteIntervalMs;
    request.phase = 'Dispatched';
    request.worker = worker;
    request.routedRevision = this.revisions.get(worker);
    request.stage = stage;
    request.acknowledged = false;
    request.leaseSeen = false;
    request.workers = [];
    request.position = undefined;
    const spec = request.spec;
    const device: DeviceSpec = { platform: spec.platform };
    if (spec.model !== undefined) device.model = spec.model;
    if (spec.class !== undefined) device.class = spec.class;
    if (spec.os !== undefined) device.os = spec.os;
    if (spec.physical !== undefined) device.physical = spec.physical;
    if (spec.requires !== undefined) device.requires = spec.requires;
    const lease = {
      apiVersion: API_VERSION,
      kind: RESOURCES.lease.kind,
      metadata: {
        name: request.name,
        namespace: request.namespace,
        labels: { [WORKER_LABEL]: worker },
        // The agent's finalizer from the start: its grant is then one status write, and a granted
        // Lease cannot go before its device is reclaimed.
        finalizers: [LEASE_FINALIZER],
        ownerReferences: [
          {
            apiVersion: API_VERSION,
            kind: RESOURCES.leaseRequest.kind,
            name: request.name,
            uid: request.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        worker,
        device,
        expiresAt: new Date(now + spec.durationSeconds * 1000).toISOString(),
        ...(spec.holder ? { holder: spec.holder } : {}),
      },
    };
    request.leaseUid = undefined;
    request.creatingLease = true;
    try {
      const created = await this.writes.run('dispatch', () =>
        this.client.create(simlockPath('lease', { namespace: request.namespace }), lease),
      );
      request.creatingLease = false;
      if (request.phase === 'Dispatched' && request.worker === worker)
        request.leaseUid ??= leaseUidOf(created);
    } catch (error) {
      request.creatingLease = false;
      if (isAlreadyExists(error)) {
        // An earlier incarnation dispatched it already: adopt that Lease, never a second one. The
        // informer may not have it yet; the API server has.
        this.log.info('lease already exists; adopting it', { request: request.key });
        const existing = this.leaseInformer.get(request.key) ?? (await this.readLease(request));
        if (request.deleting || this.requests.get(request.key) !== request) return;
        if (existing) this.adoptLease(request, existing);
        else this.retryDispatchSoon(request, worker);
        return;
      }
      this.log.warn('could not create the lease; back to the queue', {
        request: request.key,
        worker,
        error,
      });
      this.retryDispatchSoon(request, worker);
      return;
    }
    if (request.phase !== 'Dispatched' || request.worker !== worker) return;
    this.metrics.dispatches.inc({ stage });
    // The agent's time to answer counts from when the Lease could reach it: when our own watch
    // delivers it. A busy API server delivers late, and a timeout counted from the create gave up
    // on agents that had not yet been told (and every give-up made more writes). Should our watch
    // never deliver it, a longer timeout still ends the wait.
    if (this.leaseInformer.get(request.key)?.metadata.uid === request.leaseUid)
      this.startDispatchTimer(request);
    else if (!request.timers.dispatch) this.startDispatchTimer(request, this.dispatchTimeoutMs * 3);
    this.flush(request);
    const physical = spec.physical === true ? ', physical' : '';
    this.holdDispatchEvent(request, `${worker} (${stage}${physical})`);
  }

  private holdDispatchEvent(request: TrackedRequest, dispatchedTo: string): void {
    this.recordDispatchEvent(request);
    request.dispatchEvent = dispatchedTo;
    if (this.dispatchEventHoldMs <= 0) {
      this.recordDispatchEvent(request);
      return;
    }
    request.timers.dispatchEvent = this.clock.setTimeout(() => {
      request.timers.dispatchEvent = undefined;
      this.recordDispatchEvent(request);
    }, this.dispatchEventHoldMs);
  }

  /** Writes the held dispatch Event, if any. */
  private recordDispatchEvent(request: TrackedRequest): void {
    const dispatchedTo = request.dispatchEvent;
    if (dispatchedTo === undefined) return;
    request.dispatchEvent = undefined;
    this.clearTimer(request, 'dispatchEvent');
    this.event(request, 'Normal', 'Dispatched', `Dispatched to ${dispatchedTo}`);
  }

  /** A dispatch that could not be made: back to the queue, and walk again in a moment. */
  private retryDispatchSoon(request: TrackedRequest, worker: string): void {
    if (request.phase !== 'Dispatched' || request.worker !== worker) return;
    request.phase = 'Waiting';
    request.worker = undefined;
    this.clock.setTimeout(() => this.scheduleWalk(), 1000);
  }

  private async readLease(request: TrackedRequest): Promise<KubeObject | undefined> {
    try {
      return (await this.client.get(
        simlockPath('lease', { namespace: request.namespace, name: request.name }),
      )) as KubeObject;
    } catch (error) {
      if (!isNotFound(error))
        this.log.warn('could not read the lease', { request: request.key, error });
      return undefined;
    }
  }

  private startDispatchTimer(request: TrackedRequest, timeoutMs = this.dispatchTimeoutMs): void {
    this.clearTimer(request, 'dispatch');
    const worker = request.worker;
    request.timers.dispatch = this.clock.setTimeout(() => {
      request.timers.dispatch = undefined;
      if (
        this.requests.get(request.key) !== request ||
        request.phase !== 'Dispatched' ||
        request.worker !== worker ||
        !worker
      )
        return;
      this.giveUpOnDispatch(request, 'no answer from the worker within the dispatch timeout');
    }, timeoutMs);
  }

  /** The worker will not answer (silent past the timeout, or its heartbeat lapsed): requeue. */
  private giveUpOnDispatch(request: TrackedRequest, why: string): void {
    const worker = request.worker ?? '';
    this.log.warn(why, { request: request.key, worker });
    request.memos.unanswered.set(worker, { viewRevision: this.answeredRevision(request, worker) });
    this.metrics.refusals.inc({ code: 'UNANSWERED', capacity_reason: '' });
    void this.withdrawLease(request);
  }

  // ------------------------------------------------------------------------------------------
  // Leases: the agents' answers

  private onLease(object: KubeObject, deleted: boolean): void {
    const key = `${object.metadata.namespace ?? ''}/${object.metadata.name}`;
    const request = this.requests.get(key);
    if (!deleted && this.started) void this.letGoIfWorkerGone(object);
    if (deleted) {
      this.noteReleased(object);
      if (!request) return;
      request.leaseDeleting = false;
      if (request.deleting) void this.removeFinalizer(request);
      else if (this.isEarlierLease(request, object, true)) this.scheduleWalk();
      else if (request.phase === 'Dispatched') this.requeue(request);
      else if (request.phase === 'Granted')
        this.finish(request, 'Released', undefined, 'LeaseDeleted', 'its Lease was deleted');
      else this.scheduleWalk();
      return;
    }
    if (!request) {
      // The requests informer may not have delivered it yet (start-up); its recovery looks again.
      return;
    }
    if (request.deleting || this.isEarlierLease(request, object, false)) return;
    const worker = (object.spec as { worker?: unknown } | undefined)?.worker;
    const parsedStatus =
      object.status === undefined ? undefined : LeaseStatus.safeParse(object.status);
    const status = parsedStatus?.success ? parsedStatus.data : undefined;
    if (
      request.phase === 'Dispatched' &&
      worker === request.worker &&
      !status &&
      !request.acknowledged &&
      !request.leaseSeen &&
      request.leaseUid !== undefined &&
      leaseUidOf(object) === request.leaseUid
    ) {
      // First sight of the current dispatch's Lease: the agent's time to answer starts now.
      request.leaseSeen = true;
      this.startDispatchTimer(request);
      return;
    }
    if (request.phase === 'Dispatched' && worker === request.worker && status) {
      if (status.phase === 'Granted') this.grant(request, object, status.device);
      else if (status.phase === 'Refused') this.refused(request, status.refusal);
      else if (status.phase === 'Pending') {
        // The agent acknowledged it and is preparing a device (a cold boot): give it longer.
        if (!request.acknowledged) {
          request.acknowledged = true;
          this.startDispatchTimer(request, this.grantTimeoutMs);
        }
      } else
        this.refused(request, { code: 'LOST', message: `the worker marked it ${status.phase}` });
      return;
    }
    if (request.phase === 'Granted' && status && status.phase !== 'Granted') {
      this.finish(
        request,
        'Released',
        undefined,
        status.phase,
        status.message ?? `the worker marked the lease ${status.phase}`,
      );
      void this.deleteLease(request);
      return;
    }
    if (request.phase === 'Granted' && !request.timers.expiry) this.startExpiry(request, object);
  }

  /**
   * A granted Lease gone for good: the agent removed its finalizer, so it has reclaimed the device.
   * Routing counts the device free until the view says so (assume.ts), and walks at once.
   */
  private noteReleased(lease: KubeObject): void {
    const worker = (lease.spec as { worker?: unknown } | undefined)?.worker;
    const status = LeaseStatus.safeParse(lease.status);
    const device = status.success ? status.data.device : undefined;
    if (typeof worker !== 'string' || !device || !this.workers.has(worker)) return;
    const known = this.released.get(worker) ?? [];
    this.released.set(worker, [
      ...known.filter((entry) => entry.deviceId !== device.id),
      { deviceId: device.id, physical: device.physical, at: this.clock.now() },
    ]);
    this.scheduleWalk();
  }

  /** A Lease of a dispatch before the current one (see TrackedRequest.leaseUid). */
  private isEarlierLease(request: TrackedRequest, lease: KubeObject, deleted: boolean): boolean {
    if (request.phase !== 'Dispatched' && request.phase !== 'Granted') return false;
    if (request.leaseUid !== undefined) return leaseUidOf(lease) !== request.leaseUid;
    // The create is in flight: a Lease deleted now is the earlier one (the new one is not there to
    // delete); an update may be the new Lease's answer racing its create's response.
    return deleted && request.creatingLease;
  }

  private grant(request: TrackedRequest, lease: KubeObject, rawDevice: unknown): void {
    this.clearTimer(request, 'dispatch');
    request.leaseUid ??= leaseUidOf(lease);
    const device = GrantedDevice.safeParse(rawDevice);
    request.phase = 'Granted';
    request.grantedAt = this.clock.now();
    request.lease = request.name;
    request.device = device.success ? device.data : undefined;
    request.workers = [];
    request.position = undefined;
    this.clearTimer(request, 'wait');
    const label = this.workers.get(request.worker ?? '')?.label ?? request.worker;
    const what = request.device
      ? `${request.device.name} ${request.device.id}${request.device.physical ? ' (physical)' : ''}`
      : 'a device';
    request.conditions = setCondition(
      request.conditions,
      { type: 'Granted', status: 'True', reason: 'Granted', message: `${what} on ${label}` },
      this.clock.now(),
    );
    this.metrics.grants.inc();
    this.startExpiry(request, lease);
    this.flush(request);
    // The dispatch's Event, still held, goes into this one.
    const dispatchedTo = request.dispatchEvent;
    request.dispatchEvent = undefined;
    this.clearTimer(request, 'dispatchEvent');
    this.event(
      request,
      'Normal',
      'Granted',
      `Granted ${what} on ${label}${dispatchedTo ? `; dispatched to ${dispatchedTo}` : ''}`,
    );
    this.scheduleWalk();
  }

  private startExpiry(request: TrackedRequest, lease: KubeObject): void {
    const raw = (lease.spec as { expiresAt?: unknown } | undefined)?.expiresAt;
    const expiresAt = typeof raw === 'string' ? Date.parse(raw) : Number.NaN;
    if (!Number.isFinite(expiresAt)) return;
    this.clearTimer(request, 'expiry');
    request.timers.expiry = this.clock.setTimeout(() => {
      request.timers.expiry = undefined;
      if (this.requests.get(request.key) !== request || request.phase !== 'Granted') return;
      this.finish(request, 'Released', undefined, 'Expired', 'the lease reached its expiry');
      void this.deleteLease(request);
    }, expiresAt - this.clock.now());
  }

  private refused(request: TrackedRequest, rawRefusal: unknown): void {
    const worker = request.worker ?? '';
    const refusal = parseRefusal(rawRefusal);
    if (refusal.kind === 'cannot-serve') {
      request.memos.cannotServe.set(worker, refusal.code);
      request.lastCannotServe = {
        code: refusal.code,
        message: refusal.message || `${worker} cannot serve it`,
      };
      this.metrics.refusals.inc({ code: refusal.code, capacity_reason: '' });
    } else {
      const capacityReason = refusal.kind === 'no-capacity' ? refusal.capacityReason : undefined;
      request.memos.refusals.set(worker, {
        viewRevision: this.answeredRevision(request, worker),
        capacityReason,
      });
      this.metrics.refusals.inc({
        code: refusal.kind === 'no-capacity' ? 'NO_CAPACITY' : refusal.code,
        capacity_reason: capacityReason ?? '',
      });
    }
    this.log.info('refused', { request: request.key, worker, refusal });
    void this.withdrawLease(request);
  }

  /**
   * The revision a refusal or a silence of this dispatch is held against: the one it was routed on;
   * for a dispatch this process did not route (adopted after a restart), the current one.
   */
  private answeredRevision(request: TrackedRequest, worker: string): number {
    return request.routedRevision ?? this.revisions.get(worker) ?? 0;
  }

  /** Removes the Lease of a dispatch that came to nothing and puts the request back in the queue. */
  private async withdrawLease(request: TrackedRequest): Promise<void> {
    this.requeue(request);
    await this.deleteLease(request, { unlessGranted: true });
  }

  /**
   * Deletes the request's Lease. For a withdrawal (`unlessGranted`), a Lease its agent granted
   * after all (its grant reached the API server before our withdrawal: the two writes are made
   * onto one resourceVersion and the grant won) is kept and the grant taken: deleting it would
   * throw away a device the agent had given, and grant the request a second time elsewhere.
   */
  private async deleteLease(
    request: TrackedRequest,
    { unlessGranted = false }: { unlessGranted?: boolean } = {},
  ): Promise<void> {
    request.leaseDeleting = true;
    const granted = await this.letGoOfUnheldLease(request);
    if (
      unlessGranted &&
      granted &&
      !request.deleting &&
      this.requests.get(request.key) === request &&
      request.phase === 'Waiting'
    ) {
      request.leaseDeleting = false;
      this.log.info('the agent granted the Lease before our withdrawal; keeping the grant', {
        request: request.key,
      });
      this.adoptLease(request, granted);
      return;
    }
    try {
      const answer = (await this.writes.run('dispatch', () =>
        this.client.delete(
          simlockPath('lease', { namespace: request.namespace, name: request.name }),
        ),
      )) as { metadata?: { finalizers?: string[] } } | undefined;
      // Deleted outright (no finalizer): dispatch may go on. With a finalizer, wait for the event.
      if (!answer?.metadata?.finalizers?.length) request.leaseDeleting = false;
    } catch (error) {
      if (isNotFound(error)) request.leaseDeleting = false;
      else this.log.warn('could not delete the lease', { request: request.key, error });
    }
    if (!request.leaseDeleting) {
      if (request.deleting) await this.removeFinalizer(request);
      else this.scheduleWalk();
    }
  }

  /**
   * A Lease being deleted whose Worker is gone (removed by its operator) has no agent to reclaim
   * its device and let it go: take the agent's finalizer off, so that the request it belongs to can
   * be released (as Kubernetes lets go of the pods of a deleted Node). Whether the Worker is gone is
   * asked of the API server, not of our informer, which sees only the workers we select.
   */
  private async letGoIfWorkerGone(lease: KubeObject): Promise<void> {
    const worker = (lease.spec as { worker?: unknown } | undefined)?.worker;
    const finalizers = (lease.metadata.finalizers as string[] | undefined) ?? [];
    const key = `${lease.metadata.namespace ?? ''}/${lease.metadata.name}`;
    if (lease.metadata.deletionTimestamp === undefined || !finalizers.includes(LEASE_FINALIZER))
      return;
    if (typeof worker !== 'string' || this.workerInformer.get(worker)) return;
    if (this.orphanChecks.has(key)) return;
    this.orphanChecks.add(key);
    try {
      try {
        await this.client.get(simlockPath('worker', { name: worker }));
        return;
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      this.log.warn('the worker of a Lease being deleted is gone; letting the Lease go', {
        lease: key,
        worker,
      });
      await this.takeReclaimFinalizerOff(lease);
    } catch (error) {
      // A newer version of the Lease comes as an event and is looked at then; anything else is
      // tried again in a moment.
      if (!isNotFound(error) && !isConflict(error)) {
        this.log.warn('could not let go of the Lease of a gone worker; retrying', {
          lease: key,
          error,
        });
        this.clock.setTimeout(() => {
          const current = this.leaseInformer.get(key);
          if (current && !this.stopped) void this.letGoIfWorkerGone(current);
        }, 1000);
      }
    } finally {
      this.orphanChecks.delete(key);
    }
  }

  /**
   * Takes the agent's finalizer off a Lease, only onto the version given (a conflict if it changed
   * since), with some annotations in the same write.
   */
  private async takeReclaimFinalizerOff(
    lease: KubeObject,
    annotations?: Record<string, string>,
  ): Promise<void> {
    const finalizers = (lease.metadata.finalizers as string[] | undefined) ?? [];
    await this.writes.run('dispatch', () =>
      this.client.patch(
        simlockPath('lease', {
          namespace: lease.metadata.namespace ?? '',
          name: lease.metadata.name,
        }),
        {
          metadata: {
            finalizers: finalizers.filter((name) => name !== LEASE_FINALIZER),
            ...(annotations ? { annotations } : {}),
            resourceVersion: lease.metadata.resourceVersion,
          },
        },
      ),
    );
  }

  /**
   * A Lease no agent holds (refused, lost, or not answered yet) carries the agent's finalizer all
   * the same (dispatch puts it there): take it off, so that the Lease goes at once also when its
   * agent is gone, and mark it withdrawn, so that no agent answers it in the moment before it is
   * deleted. Only onto the Lease as last seen: an agent that grants meanwhile makes this fail (its
   * grant is made the same way, so one of the two fails). Answers the Lease when its agent holds it
   * after all (granted, as our informer or, after such a conflict, the API server says), so that a
   * withdrawal can keep the grant; undefined otherwise.
   */
  private async letGoOfUnheldLease(request: TrackedRequest): Promise<KubeObject | undefined> {
    const isGranted = (lease: KubeObject | undefined): boolean =>
      lease !== undefined &&
      lease.metadata.deletionTimestamp === undefined &&
      (lease.status as { phase?: unknown } | undefined)?.phase === 'Granted';
    // Our watch may not have delivered a Lease just created (a dispatch timed out before it did).
    const lease = this.leaseInformer.get(request.key) ?? (await this.readLease(request));
    const finalizers = (lease?.metadata.finalizers as string[] | undefined) ?? [];
    if (!lease || !finalizers.includes(LEASE_FINALIZER)) return undefined;
    if (isGranted(lease)) return lease;
    if (lease.metadata.deletionTimestamp !== undefined) return undefined;
    try {
      // Between this write and the delete the agent must not answer it again.
      await this.takeReclaimFinalizerOff(lease, { [LEASE_WITHDRAWN_ANNOTATION]: 'true' });
    } catch (error) {
      if (isConflict(error)) {
        // The Lease changed since we read it: the agent may have granted it meanwhile.
        const current = await this.readLease(request);
        if (current && isGranted(current) && current.metadata.uid === lease.metadata.uid)
          return current;
      } else if (!isNotFound(error)) {
        this.log.warn('could not take the reclaim finalizer off a Lease', {
          request: request.key,
          error,
        });
      }
    }
    return undefined;
  }

  // ------------------------------------------------------------------------------------------
  // Endings

  private fail(request: TrackedRequest, error: ErrorBody): void {
    request.error = error;
    request.conditions = setCondition(
      request.conditions,
      { type: 'Failed', status: 'True', reason: camelCase(error.code), message: error.message },
      this.clock.now(),
    );
    this.metrics.failures.inc({ code: error.code });
    this.finish(request, 'Failed', error);
    this.event(request, 'Warning', 'Failed', `${error.code}: ${error.message}`);
  }

  private finish(
    request: TrackedRequest,
    phase: 'Failed' | 'Released',
    error: ErrorBody | undefined,
    reason?: string,
    message?: string,
  ): void {
    request.phase = phase;
    if (error) request.error = error;
    request.workers = [];
    request.position = undefined;
    this.clearTimers(request);
    if (phase === 'Released' && reason) {
      request.conditions = setCondition(
        request.conditions,
        { type: 'Granted', status: 'False', reason, message: message ?? reason },
        this.clock.now(),
      );
      this.event(request, 'Normal', 'Released', `Released: ${message ?? reason}`);
    }
    this.flush(request);
    this.scheduleWalk();
  }

  /** The request is being deleted: release its Lease, then let the request go. */
  private async release(request: TrackedRequest): Promise<void> {
    this.clearTimers(request);
    this.scheduleWalk();
    if (this.leaseInformer.get(request.key)) await this.deleteLease(request);
    else await this.removeFinalizer(request);
  }

  private async removeFinalizer(request: TrackedRequest): Promise<void> {
    const current = this.requestInformer.get(request.key);
    const finalizers = (current?.metadata.finalizers as string[] | undefined) ?? [];
    if (!finalizers.includes(REQUEST_FINALIZER)) return;
    try {
      await this.writes.run('bookkeeping', () =>
        this.client.patch(
          simlockPath('leaseRequest', { namespace: request.namespace, name: request.name }),
          {
            metadata: {
              finalizers: finalizers.filter((name) => name !== REQUEST_FINALIZER),
              resourceVersion: current?.metadata.resourceVersion,
            },
          },
        ),
      );
    } catch (error) {
      if (isNotFound(error)) return;
      this.log.warn('could not remove the release finalizer; retrying', {
        request: request.key,
        error,
      });
      this.clock.setTimeout(() => void this.removeFinalizer(request), 500);
    }
  }

  private forget(request: TrackedRequest): void {
    this.clearTimers(request);
    this.requests.delete(request.key);
    this.queueOrder = undefined;
    this.scheduleWalk();
  }

  private clearTimer(request: TrackedRequest, which: keyof TrackedRequest['timers']): void {
    const timer = request.timers[which];
    if (timer) this.clock.clearTimeout(timer);
    request.timers[which] = undefined;
  }

  private clearTimers(request: TrackedRequest): void {
    for (const which of ['wait', 'dispatch', 'expiry', 'write', 'dispatchEvent'] as const)
      this.clearTimer(request, which);
  }

  // ------------------------------------------------------------------------------------------
  // Status writes: only when changed; outcomes at once, the way there (Waiting, its reasons,
  // Dispatched) coalesced.

  private flush(request: TrackedRequest): void {
    if (request.deleting || this.requests.get(request.key) !== request) return;
    const next = desiredStatus(request) as Record<string, unknown>;
    if (request.written && canonicalJson(request.written) === canonicalJson(next)) return;
    const urgent = urgentPart(request.written) !== urgentPart(next);
    const now = this.clock.now();
    const dueAt = Math.max(
      request.lastReasonWriteAt + this.reasonWriteIntervalMs,
      request.settleUntil,
    );
    if (!urgent && now < dueAt) {
      request.timers.write ??= this.clock.setTimeout(() => {
        request.timers.write = undefined;
        this.flush(request);
      }, dueAt - now);
      return;
    }
    this.clearTimer(request, 'write');
    this.writes.schedule(request.key, urgent ? 'dispatch' : 'progress', () => this.write(request));
  }

  /** Writes the request's status as it is when the write's turn comes (see write-queue.ts). */
  private async write(request: TrackedRequest): Promise<void> {
    if (request.deleting || this.requests.get(request.key) !== request) return;
    const next = desiredStatus(request) as Record<string, unknown>;
    if (request.written && canonicalJson(request.written) === canonicalJson(next)) return;
    try {
      await this.client.patch(
        simlockPath('leaseRequest', {
          namespace: request.namespace,
          name: request.name,
          subresource: 'status',
        }),
        { status: statusMergePatch(request.written, next) },
      );
      request.written = next;
      if (next.workers !== undefined) request.lastReasonWriteAt = this.clock.now();
      this.metrics.statusWrites.inc();
    } catch (error) {
      if (isNotFound(error)) return;
      this.log.warn('status write failed; retrying', { request: request.key, error });
      this.clock.setTimeout(() => this.flush(request), 1000);
    }
  }

  private event(
    request: TrackedRequest,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): void {
    // History in order: a dispatch still held is recorded before what came of it.
    if (request.dispatchEvent !== undefined) this.recordDispatchEvent(request);
    const now = new Date(this.clock.now()).toISOString();
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${request.name}.`, namespace: request.namespace },
      involvedObject: {
        apiVersion: API_VERSION,
        kind: RESOURCES.leaseRequest.kind,
        name: request.name,
        namespace: request.namespace,
        uid: request.uid,
      },
      reason,
      message: message.slice(0, 1024),
      type,
      source: { component: 'simlock-controller' },
      reportingComponent: 'simlock.dev/controller',
      reportingInstance: this.identity,
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    this.writes
      .run('bookkeeping', () => this.eventClient.create(eventsPath(request.namespace), event))
      .catch((error: unknown) =>
        this.log.warn('could not record an event', { request: request.key, reason, error }),
      );
  }

  // ------------------------------------------------------------------------------------------
  // For tests and the CLI's explain: what the controller holds.

  snapshot(): { workers: WorkerView[]; waiting: string[] } {
    return {
      workers: [...this.currentFleet().views],
      waiting: [...this.requests.values()]
        .filter((request) => request.phase === 'Waiting')
        .map((request) => request.key),
    };
  }
}

function summaryOf(request: TrackedRequest): string {
  const counts = new Map<string, number>();
  for (const entry of request.workers)
    counts.set(entry.reason, (counts.get(entry.reason) ?? 0) + 1);
  return [...counts].map(([reason, count]) => `${count} ${reason}`).join(', ');
}

function sameReasons(a: readonly WorkerReason[], b: readonly WorkerReason[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    const [x, y] = [a[index], b[index]];
    if (
      x?.worker !== y?.worker ||
      x?.reason !== y?.reason ||
      x?.capacityReason !== y?.capacityReason
    )
      return false;
  }
  return true;
}

function leaseUidOf(lease: unknown): string | undefined {
  const uid = (lease as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid;
  return typeof uid === 'string' ? uid : undefined;
}

function camelCase(code: string): string {
  return code
    .toLowerCase()
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');
}
