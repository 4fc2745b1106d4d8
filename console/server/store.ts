// The console's one watch of the cluster: informers on Workers, LeaseRequests, the agents'
// heartbeat Leases and the Events of LeaseRequests, those its identity may list (watch-plan.ts).
// The leases it shows are their requests' grants (status.worker, device, expiresAt, recovery): no
// Lease is read, wherever it lives (ADR 0034). Every object is parsed with the contract's schemas
// (one that does not parse is left out) and kept trimmed to what the pages show; listeners hear of
// each change once, whoever is looking, and of each change in the watches' state (feed.ts).
import {
  EXPIRING_SOON_CONDITION,
  HeartbeatLease,
  LeaseRequestObject,
  RESOURCES,
  WorkerObject,
  reasonsByWorker,
  type WorkerReason,
} from '../../api/index.js';
import {
  Informer,
  coordinationLeasePath,
  simlockPath,
  type InformerEvent,
  type KubeClient,
  type KubeObject,
  selfMay,
  type Logger,
} from '../../runtime/index.js';
import type {
  AttentionSettings,
  EventRow,
  EventView,
  Feed,
  Kind,
  LeaseView,
  RequestView,
  WorkerView,
} from '../model/wire.js';
import { DEFAULT_ATTENTION } from '../model/attention.js';
import { parseCoreEvent } from './core-event.js';
import { leaseViewOf } from './lease-view.js';
import { drainedSince } from './drained-since.js';
import { FeedState } from './feed.js';
import { planWatches } from './watch-plan.js';

const HEARTBEAT_PREFIX = 'worker-';

/** Events kept per request: the newest this many. */
const MAX_EVENTS_PER_REQUEST = 200;
/** Events kept for the Events page, of every request, gone ones too: the newest this many. */
export const MAX_RECENT_EVENTS = 2000;

export interface StoreChange {
  /** feed: the watches' state (key ''); event: an Event (namespace/name of the Event). */
  kind: Kind | 'detail' | 'feed' | 'event';
  /** A worker's name, else namespace/name. */
  key: string;
}

export interface StoreOptions {
  client: KubeClient;
  log: Logger;
  /** Where the agents renew their heartbeats. */
  simlockNamespace: string;
  /**
   * Only requests (and so leases) and events of this namespace; none: every namespace the client
   * may list (else its kubeconfig context's namespace).
   */
  namespace?: string | undefined;
  /** Who is refused, in the page's sentences on what is not shown: "You", "The console". */
  subject: string;
  /** The Attention page's thresholds and the controller's maximum lease duration. */
  attention?: Partial<AttentionSettings> | undefined;
}

function keyOf(namespace: string | undefined, name: string): string {
  return namespace === undefined ? name : `${namespace}/${name}`;
}

function timeText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  return undefined;
}

export class ConsoleStore {
  readonly workers = new Map<string, WorkerView>();
  readonly requests = new Map<string, RequestView>();
  readonly leases = new Map<string, LeaseView>();
  /** Per request key: its reasons per worker while it waits. */
  readonly reasons = new Map<string, WorkerReason[]>();
  /** Per request key: its Events by Event name. */
  readonly events = new Map<string, Map<string, EventView>>();
  /**
   * The newest Events by their own key (namespace/name), oldest first, kept when their request
   * is gone: the Events page shows what happened to requests released a while ago too.
   */
  readonly recentEvents = new Map<string, EventRow>();
  readonly attention: AttentionSettings;
  private readonly heartbeats = new Map<string, WorkerView['heartbeat']>();
  private readonly drainedSince = new Map<string, string>();
  /** The Workers as read (`why` runs the routing stages on their full status). */
  readonly workerObjects = new Map<string, WorkerObject>();
  private readonly informers: Informer[] = [];
  private readonly listeners = new Set<(change: StoreChange) => void>();
  private feedState = new FeedState(
    { namespace: undefined, hidden: [], unwatched: [] },
    () => undefined,
  );

  constructor(private readonly options: StoreOptions) {
    this.attention = { ...DEFAULT_ATTENTION, ...options.attention };
  }

  on(listener: (change: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Plans the watches from what the console's identity may list, opens them, and resolves once
   * each has listed or failed once (or after `timeoutMs`): a watch that fails does not hold the
   * console back, the page says it is not live instead.
   */
  async start(timeoutMs = 10_000): Promise<void> {
    const { client, simlockNamespace } = this.options;
    const plan = await planWatches({
      may: (attributes) => selfMay(client, attributes),
      namespace: this.options.namespace,
      fallbackNamespace: client.namespace,
      simlockNamespace,
      subject: this.options.subject,
    });
    // Leases are their requests' grants: unwatched when requests are.
    const unwatched: Feed['unwatched'] = (
      ['workers', 'heartbeats', 'requests', 'events'] as const
    ).filter((what) => !plan[what]);
    if (!plan.requests) unwatched.push('leases');
    this.feedState = new FeedState({ ...plan, unwatched }, () => this.emit('feed', ''));
    const { namespace } = plan;
    const where = namespace === undefined ? 'all namespaces' : namespace;
    const settled: Promise<void>[] = [];
    const watch = (
      what: string,
      path: string,
      handle: (event: InformerEvent<KubeObject>) => void,
      extra = {},
    ) => {
      const reports = this.feedState.watch(what);
      settled.push(reports.settled);
      const informer = new Informer(client, {
        path,
        ...extra,
        onListed: () => reports.listed(),
        onError: (error) => {
          reports.failed(error);
          this.options.log.warn('watch failed; retrying', { path, error });
        },
      });
      informer.on(handle);
      this.informers.push(informer);
    };
    if (plan.workers) watch('Workers', simlockPath('worker'), (event) => this.onWorker(event));
    if (plan.heartbeats)
      watch(`Heartbeats in ${simlockNamespace}`, coordinationLeasePath(simlockNamespace), (event) =>
        this.onHeartbeat(event),
      );
    if (plan.requests)
      watch(`LeaseRequests in ${where}`, simlockPath('leaseRequest', { namespace }), (event) =>
        this.onRequest(event),
      );
    if (plan.events)
      watch(
        `Events in ${where}`,
        namespace === undefined ? '/api/v1/events' : `/api/v1/namespaces/${namespace}/events`,
        (event) => this.onEvent(event),
        {
          fieldSelector: `involvedObject.kind=${RESOURCES.leaseRequest.kind}`,
          // kube-apiserver keeps no watch cache for Events, so it sends no bookmarks: a quiet
          // watch would be cut by the client's 90 s idle limit (and logged as a failure). Ended
          // by the server before that, it is simply opened again.
          watchTimeoutSeconds: 60,
        },
      );
    for (const informer of this.informers) informer.start();
    await Promise.race([
      Promise.all(settled),
      new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
  }

  async stop(): Promise<void> {
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }

  /** How current the console's view is, and what it does not watch. */
  feed(): Feed {
    return this.feedState.feed();
  }

  /** Namespaces of the requests (and so of the leases) the console holds. */
  namespaces(): Set<string> {
    const result = new Set<string>();
    for (const request of this.requests.values()) result.add(request.namespace);
    return result;
  }

  eventsOf(key: string): EventView[] {
    return [...(this.events.get(key)?.values() ?? [])].sort((a, b) =>
      (a.firstAt ?? '').localeCompare(b.firstAt ?? ''),
    );
  }

  private emit(kind: StoreChange['kind'], key: string): void {
    for (const listener of this.listeners) listener({ kind, key });
  }

  private onWorker(event: InformerEvent<KubeObject>): void {
    const name = event.object.metadata.name;
    const parsed = WorkerObject.safeParse(event.object);
    if (event.type === 'deleted' || !parsed.success) {
      this.workerObjects.delete(name);
      this.drainedSince.delete(name);
      if (this.workers.delete(name)) this.emit('worker', name);
      return;
    }
    this.workerObjects.set(name, parsed.data);
    const since = parsed.data.spec.drained ? drainedSince(event.object.metadata) : undefined;
    if (since === undefined) this.drainedSince.delete(name);
    else this.drainedSince.set(name, since);
    this.refreshWorker(name);
  }

  private refreshWorker(name: string): void {
    const worker = this.workerObjects.get(name);
    if (!worker) return;
    const status = worker.status;
    const heartbeat = this.heartbeats.get(name);
    const since = this.drainedSince.get(name);
    this.workers.set(name, {
      name,
      ...(worker.spec.label !== undefined ? { label: worker.spec.label } : {}),
      drained: worker.spec.drained,
      ...(since !== undefined ? { drainedSince: since } : {}),
      ...(status
        ? {
            health: status.health,
            agentVersion: status.agentVersion,
            protocol: status.protocol,
            ready: status.catalog !== undefined && status.capacity !== undefined,
            ...(status.capacity ? { capacity: status.capacity } : {}),
          }
        : {}),
      devices: status?.devices ?? [],
      queue: status?.queue ?? [],
      queueDepth: status?.queueDepth ?? 0,
      ...(heartbeat ? { heartbeat } : {}),
    });
    this.emit('worker', name);
  }

  private onHeartbeat(event: InformerEvent<KubeObject>): void {
    const parsed = HeartbeatLease.safeParse(event.object);
    if (!parsed.success || !parsed.data.metadata.name.startsWith(HEARTBEAT_PREFIX)) return;
    const worker = parsed.data.metadata.name.slice(HEARTBEAT_PREFIX.length);
    if (event.type === 'deleted') this.heartbeats.delete(worker);
    else {
      const spec = parsed.data.spec;
      this.heartbeats.set(worker, {
        ...(spec?.renewTime ? { renewTime: spec.renewTime } : {}),
        ...(spec?.leaseDurationSeconds !== undefined
          ? { durationSeconds: spec.leaseDurationSeconds }
          : {}),
      });
    }
    this.refreshWorker(worker);
  }

  private onRequest(event: InformerEvent<KubeObject>): void {
    const key = keyOf(event.object.metadata.namespace, event.object.metadata.name);
    const parsed = LeaseRequestObject.safeParse(event.object);
    if (event.type === 'deleted' || !parsed.success) {
      this.reasons.delete(key);
      this.events.delete(key);
      if (this.requests.delete(key)) this.emit('request', key);
      this.setLease(key, undefined);
      return;
    }
    const { metadata, spec, status } = parsed.data;
    const previousReasons = this.reasons.get(key);
    this.requests.set(key, {
      namespace: metadata.namespace ?? '',
      name: metadata.name,
      ...optional('createdAt', timeText(metadata.creationTimestamp)),
      deleting: metadata.deletionTimestamp !== undefined,
      spec,
      ...optional('phase', status?.phase),
      ...optional('queuedAt', status?.queuedAt),
      ...optional('position', status?.position),
      ...optional('summary', status?.summary),
      ...optional('worker', status?.worker),
      ...optional('lease', status?.lease),
      ...optional('device', status?.device),
      ...optional('progress', status?.phase === 'Dispatched' ? status.progress : undefined),
      ...optional('estimate', status?.phase === 'Waiting' ? status.estimate : undefined),
      ...optional('error', status?.error),
      ...optional(
        'expiringSoon',
        status?.phase === 'Granted' &&
          status.conditions?.some((c) => c.type === EXPIRING_SOON_CONDITION && c.status === 'True')
          ? true
          : undefined,
      ),
    });
    const reasons = reasonsByWorker(status);
    this.reasons.set(key, reasons);
    this.emit('request', key);
    this.setLease(key, leaseViewOf(parsed.data));
    if (JSON.stringify(previousReasons ?? []) !== JSON.stringify(reasons)) this.emit('detail', key);
  }

  /** The lease a request holds, told to listeners when it comes, changes or goes. */
  private setLease(key: string, view: LeaseView | undefined): void {
    const known = this.leases.get(key);
    if (view === undefined) {
      if (this.leases.delete(key)) this.emit('lease', key);
      return;
    }
    if (known && JSON.stringify(known) === JSON.stringify(view)) return;
    this.leases.set(key, view);
    this.emit('lease', key);
  }

  private onEvent(event: InformerEvent<KubeObject>): void {
    const parsed = parseCoreEvent(event.object);
    if (!parsed) return;
    const { involvedObject, metadata, view } = parsed;
    const key = keyOf(involvedObject.namespace, involvedObject.name);
    const eventKey = keyOf(involvedObject.namespace, metadata.name);
    const known = this.events.get(key) ?? new Map<string, EventView>();
    this.recentEvents.delete(eventKey);
    if (event.type === 'deleted') known.delete(metadata.name);
    else {
      known.set(metadata.name, view);
      this.recentEvents.set(eventKey, {
        ...view,
        key: eventKey,
        namespace: involvedObject.namespace,
        request: involvedObject.name,
      });
      if (this.recentEvents.size > MAX_RECENT_EVENTS) {
        const oldest = this.recentEvents.keys().next();
        if (!oldest.done) this.recentEvents.delete(oldest.value);
      }
      if (known.size > MAX_EVENTS_PER_REQUEST) {
        const oldest = [...known.entries()].sort((a, b) =>
          (a[1].firstAt ?? '').localeCompare(b[1].firstAt ?? ''),
        )[0];
        if (oldest) known.delete(oldest[0]);
      }
    }
    this.events.set(key, known);
    this.emit('detail', key);
    this.emit('event', eventKey);
  }
}

/** `{[name]: value}` when there is a value, else nothing: optional fields stay absent. */
function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [name]: value } as { [P in K]?: V });
}
