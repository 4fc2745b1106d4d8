// What the console server sends the browser over its event stream, defined once: the server
// builds these, the browser parses every message with them (zod, bounded) before it shows it.
// Objects are trimmed to what the pages show; a request's per-worker reasons and its Events come
// only for the requests a page looks at (focus), as a waiting request may carry thousands.
import { z } from 'zod';
import {
  AgentQueueEntry,
  Capacity,
  Device,
  DeviceRecovery,
  ErrorBody,
  GrantEstimate,
  GrantProgress,
  GrantedDevice,
  Health,
  LeasePhase,
  LeaseRequestSpec,
  RequestPhase,
  WorkerReason,
  name,
} from '../../api/index.js';

const time = z.string().max(64);

export const WorkerView = z.object({
  name,
  label: z.string().max(63).optional(),
  drained: z.boolean(),
  health: Health.optional(),
  agentVersion: z.string().max(64).optional(),
  capacity: Capacity.optional(),
  devices: z.array(Device).max(512),
  queue: z.array(AgentQueueEntry).max(50),
  queueDepth: z.number().int().min(0),
  /** When the agent last renewed its heartbeat Lease, and for how long it holds. */
  heartbeat: z
    .object({ renewTime: time.optional(), durationSeconds: z.number().int().min(0).optional() })
    .optional(),
  /** The protocol its agent speaks (the controller routes only to PROTOCOL.min..max). */
  protocol: z.number().int().min(0).max(1000).optional(),
  /** Its agent has read its drivers (catalog and capacity written); absent with no status. */
  ready: z.boolean().optional(),
  /**
   * While drained: when `spec.drained` was last written, as the API server's managedFields record
   * it (the drain is at least this old; the Worker keeps no drain time of its own).
   */
  drainedSince: time.optional(),
});
export type WorkerView = z.infer<typeof WorkerView>;

export const RequestView = z.object({
  namespace: name,
  name,
  createdAt: time.optional(),
  deleting: z.boolean(),
  spec: LeaseRequestSpec,
  phase: RequestPhase.optional(),
  queuedAt: time.optional(),
  position: z.number().int().min(0).optional(),
  summary: z.string().max(256).optional(),
  worker: z.string().max(253).optional(),
  lease: z.string().max(253).optional(),
  device: GrantedDevice.optional(),
  /** While Dispatched: the worker makes or boots the device (provisioning, booting). */
  progress: GrantProgress.optional(),
  /** While Waiting: when the controller expects to grant it, and how it worked that out. */
  estimate: GrantEstimate.optional(),
  error: ErrorBody.optional(),
  /** While granted: the controller's ExpiringSoon condition is True (its --expiring-soon-before). */
  expiringSoon: z.boolean().optional(),
});
export type RequestView = z.infer<typeof RequestView>;

export const LeaseView = z.object({
  namespace: name,
  name,
  worker: name,
  holder: z.string().max(100).optional(),
  expiresAt: time,
  phase: LeasePhase.optional(),
  device: GrantedDevice.optional(),
  grantedAt: time.optional(),
  deleting: z.boolean(),
  /** While granted: its device crashed and its agent boots it again under the lease. */
  recovery: DeviceRecovery.optional(),
  /**
   * The recovery as people read it (runtime/device-recovery-text.ts, which the page cannot
   * import): "device iPhone 17 (…) crashed (shut down): booting it again, back in about 40 s".
   */
  recoveryText: z.string().max(1024).optional(),
});
export type LeaseView = z.infer<typeof LeaseView>;

export const EventView = z.object({
  type: z.string().max(32),
  reason: z.string().max(128),
  message: z.string().max(1024),
  count: z.number().int().min(0),
  firstAt: time.optional(),
  lastAt: time.optional(),
});
export type EventView = z.infer<typeof EventView>;

/** An Event on the Events page: which request it is about, and its own key (namespace/name). */
export const EventRow = EventView.extend({
  key: z.string().max(600),
  namespace: name,
  request: name,
});
export type EventRow = z.infer<typeof EventRow>;

/** What the Attention page counts as long, and the controller's maximum lease duration. */
export const AttentionSettings = z.object({
  /** The controller's --max-lease-duration (the chart's controller.maxLeaseDuration). */
  maxLeaseSeconds: z.number().int().min(1),
  /** A request waiting longer than this needs a look. */
  waitingOverSeconds: z.number().int().min(0),
  /** A worker drained longer than this needs a look. */
  drainedOverSeconds: z.number().int().min(0),
});
export type AttentionSettings = z.infer<typeof AttentionSettings>;

/** The reasons and Events of one request a page looks at. */
export const RequestDetail = z.object({
  namespace: name,
  name,
  workers: z.array(WorkerReason).max(5000),
  events: z.array(EventView).max(200),
  /** False when this person may not read Events in the request's namespace. */
  eventsVisible: z.boolean(),
  /**
   * While Waiting, when this person may list Workers: what would unblock it (ADR 0026), one line
   * per change, as `kubectl simlock why` prints them.
   */
  unblock: z.array(z.string().max(512)).max(4).optional(),
});
export type RequestDetail = z.infer<typeof RequestDetail>;

/** What this person may do, as the API server's authorizer answered the console. */
export const Abilities = z.object({
  user: z.string().max(1024),
  /** May list Workers: without it requests name workers by their raw names. */
  seeWorkers: z.boolean(),
  drainWorkers: z.boolean(),
  /** Namespaces whose requests this person may delete (release), or all. */
  releaseEverywhere: z.boolean(),
  releaseIn: z.array(name).max(10_000),
  mode: z.enum(['local', 'token']),
});
export type Abilities = z.infer<typeof Abilities>;

export const Kind = z.enum(['worker', 'request', 'lease']);
export type Kind = z.infer<typeof Kind>;

/** One of the console's watches that is not up to date: what it watches, and its last error. */
export const WatchProblem = z.object({
  what: z.string().max(256),
  error: z.string().max(1024),
  since: time,
});
export type WatchProblem = z.infer<typeof WatchProblem>;

/**
 * How current the console's own view of the cluster is, and what it does not watch. The page says
 * Live only when every watch has listed and none is failing.
 */
export const Feed = z.object({
  /** The one namespace whose requests, leases and Events are watched; none: every namespace. */
  namespace: name.optional(),
  /** What is not shown and why, one sentence each ("You may not list …: the fleet is not shown."). */
  hidden: z.array(z.string().max(1024)).max(20),
  /** What the console does not watch (so a worker's missing heartbeat is unknown, not "never"). */
  unwatched: z.array(z.enum(['workers', 'heartbeats', 'requests', 'leases', 'events'])).max(5),
  /** Watches that have not listed yet. */
  syncing: z.array(z.string().max(256)).max(20),
  failing: z.array(WatchProblem).max(20),
});
export type Feed = z.infer<typeof Feed>;

export const SnapshotMessage = z.object({
  stream: z.string().max(64),
  abilities: Abilities,
  feed: Feed,
  attention: AttentionSettings,
  workers: z.array(WorkerView).max(20_000),
  requests: z.array(RequestView).max(50_000),
  leases: z.array(LeaseView).max(50_000),
});
export type SnapshotMessage = z.infer<typeof SnapshotMessage>;

/** A batch of changes, sent at most every few tens of milliseconds. */
export const ChangesMessage = z.object({
  workers: z.array(WorkerView).max(20_000).default([]),
  requests: z.array(RequestView).max(50_000).default([]),
  leases: z.array(LeaseView).max(50_000).default([]),
  /** Keys of what is gone: a worker's name, or namespace/name. */
  gone: z
    .array(z.object({ kind: Kind, key: z.string().max(600) }))
    .max(100_000)
    .default([]),
  details: z.array(RequestDetail).max(50).default([]),
  /** Events, for a page that asked for them (focus `events`); `eventsReset`: these are all. */
  events: z.array(EventRow).max(5000).default([]),
  eventsGone: z.array(z.string().max(600)).max(5000).default([]),
  eventsReset: z.boolean().default(false),
  /** What this person may do, when it changed (a namespace seen for the first time). */
  abilities: Abilities.optional(),
  /** The console's watches, when that changed (one failed, or listed again). */
  feed: Feed.optional(),
});
export type ChangesMessage = z.infer<typeof ChangesMessage>;

export const FocusBody = z.object({
  requests: z.array(z.string().max(600)).max(50),
  /** The page shows every Event this person may read (the Events page). */
  events: z.boolean().default(false),
});
export type FocusBody = z.infer<typeof FocusBody>;

/** The key of a namespaced object on the wire. */
export function objectKeyOf(object: { namespace: string; name: string }): string {
  return `${object.namespace}/${object.name}`;
}
