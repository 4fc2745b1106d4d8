// The controller's options and their defaults, in one place: the flags of controller/main.ts and
// the Reconciler's options (tests and benchmarks build one in-process) read them from here.
import { DEFAULT_EXPIRING_SOON_SECONDS, DEFAULT_MAX_LEASE_SECONDS } from '../api/index.js';
import type { Clock, KubeClient, Logger } from '../runtime/index.js';
import type { ApiContact } from './api-contact.js';
import type { ControllerMetrics } from './metrics.js';
import type { RoutingPolicy } from '../api/index.js';

export const CONTROLLER_DEFAULTS = {
  /** Where heartbeats and the leader's Lease live. */
  namespace: 'simlock-system',
  /** Address of /healthz, /readyz, /leader and /metrics. */
  listen: '0.0.0.0:8080',
  /** How long an agent may take to answer a Lease before that worker counts as disconnected. */
  dispatchTimeoutMs: 10_000,
  /** How long an agent that acknowledged a Lease may take to grant it (cold boots). */
  grantTimeoutMs: 600_000,
  /** Reason-only status changes are written at most this often per request (ADR 0004). */
  reasonWriteIntervalMs: 1000,
  /** The leader election Lease's duration. */
  leaseDurationSeconds: 15,
  leaderElection: true,
  /** Requests per second to the API server (0: unlimited), and the burst above it (0: twice). */
  kubeApiQps: 0,
  kubeApiBurst: 0,
  /** Writes to the API server in flight at once (write-queue.ts). */
  maxConcurrentWrites: 32,
  /** Waiting requests' reason and position writes per second, all together (0: no limit). */
  progressWritesPerSecond: 100,
  /**
   * How long a grant counts against its worker's view before the view shows it: longer than the
   * agent's wait to write devices taken (viewTakenDelayMs, 5 s: ADR 0029) and that write's way.
   */
  assumeGrantsForMs: 15_000,
  /** How long a device given back counts as free before the view shows it (written at once). */
  assumeReleasesForMs: 3000,
  /**
   * Plain grants' Events per second at most, with a burst of ten seconds' worth (ADR 0028); past
   * it a grant is told by its request's status. 0: every grant its Event.
   */
  grantEventsPerSecond: 1,
  /** Name of this controller in Events, when none is given. */
  identity: 'simlock-controller',
  /** The longest a lease may live, extensions included (--max-lease-duration). */
  maxLeaseMs: DEFAULT_MAX_LEASE_SECONDS * 1000,
  /** The ExpiringSoon condition and Event this long before a lease's expiry; 0: none. */
  expiringSoonMs: DEFAULT_EXPIRING_SOON_SECONDS * 1000,
  /** The usage history into the ConfigMap simlock-usage this often (ADR 0027); 0: never. */
  usagePublishIntervalMs: 60_000,
} as const;

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
  /**
   * What the process hears of the API server (its leader election's renewals): a heartbeat lapse
   * due while it hears nothing is held (api-contact.ts). None: every lapse judged when due.
   */
  apiContact?: ApiContact | undefined;
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
   * A dispatch's Event is held at most this long (the dispatch timeout when not given), so a
   * grant within it is one Event (ADR 0005, 0016); 0 writes `Dispatched to <worker> (<stage>)` at
   * once for every dispatch.
   */
  dispatchEventHoldMs?: number | undefined;
  /** Writes in flight at once (see write-queue.ts). */
  maxConcurrentWrites?: number;
  /**
   * Progress writes (a waiting request's reasons and position) per second, all requests together;
   * 0: no limit but the concurrency. Dispatches and outcomes are never held by it.
   */
  progressWritesPerSecond?: number;
  /**
   * A plain grant (dispatched and granted, nothing told between) is an Event of its own at most
   * this often, with a burst of ten seconds' worth; past it the request's status tells it (ADR
   * 0028). 0: every grant its Event.
   */
  grantEventsPerSecond?: number;
  /** Name of this controller in Events. */
  identity?: string;
  /**
   * A grant counts against its worker's view until the view shows it, or this long (the agent
   * reports its view debounced); see assume-cache.ts.
   */
  assumeGrantsForMs?: number;
  /** The longest a lease may live, extensions included. */
  maxLeaseMs?: number;
  /** The expiring-soon warning this long before expiry; 0: none. */
  expiringSoonMs?: number;
  /** The usage history into the ConfigMap simlock-usage at most this often (ADR 0027); 0: never. */
  usagePublishIntervalMs?: number;
}
