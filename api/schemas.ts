// The shapes of Worker, LeaseRequest and Lease, defined once. The CRDs in crds/ are generated from
// these (tools/generate-crds.ts), so every bound here is also enforced by the API server; the
// `x-kubernetes-*` metadata below goes straight into the CRD's OpenAPI schema.
import { z } from 'zod';
import { CapacityReason, Platform, WaitingReason } from './reasons.js';
import { ErrorCodeSchema } from './errors.js';

/** A rule that zod checks when we parse and the API server checks as CEL; both say `message`. */
interface Rule {
  rule: string;
  message: string;
  fieldPath?: string;
}
function celRules(...rules: Rule[]): Record<string, unknown> {
  return { 'x-kubernetes-validations': rules };
}

const name = z.string().min(1).max(253);
const shortText = z.string().max(256);
const timestamp = z.iso.datetime();
const count = z.number().int().min(0).max(100_000);

export const DeviceClass = z.enum(['phone', 'tablet']);
export type DeviceClass = z.infer<typeof DeviceClass>;

// "18", "18.4", "34" (an Android API level), or a range of comparisons: ">=18 <19".
export const OS_SPEC_PATTERN =
  /^(?:(?:>=|<=|>|<|=)?[0-9]{1,4}(?:\.[0-9]{1,4}){0,2})(?: +(?:>=|<=|>|<|=)?[0-9]{1,4}(?:\.[0-9]{1,4}){0,2}){0,3}$/;
export const OsSpec = z
  .string()
  .max(64)
  .regex(OS_SPEC_PATTERN, {
    message: 'os must be a version such as "18.4" or a range such as ">=18 <19"',
  })
  .describe(
    'An exact OS version ("18.4"; an API level such as "34" on Android), or a range (">=18 <19").',
  );

// ---------------------------------------------------------------------------------------------
// Worker (cluster-scoped): spec set by operators, status (the view) written by its agent.

export const WorkerSpec = z.object({
  drained: z.boolean().default(false).describe('A drained worker takes no new leases.'),
  label: z
    .string()
    .max(63)
    .optional()
    .describe('Display name; a worker without one is shown by its name.'),
});

export const Health = z.enum(['starting', 'running', 'unhealthy']);
export type Health = z.infer<typeof Health>;

export const DeviceState = z.enum([
  'booting',
  'ready',
  'leased',
  'reclaiming',
  'absent',
  'quarantined',
  'deleted',
]);
export type DeviceState = z.infer<typeof DeviceState>;

export const PresenceReason = z.enum(['locked', 'untrusted', 'not-present']);
export type PresenceReason = z.infer<typeof PresenceReason>;

/** The latest presence read of a physical device: present, or not present with a reason. */
export const Presence = z
  .object({ present: z.boolean(), reason: PresenceReason.optional() })
  .refine((p) => (p.present ? p.reason === undefined : p.reason !== undefined), {
    message: 'presence.reason is required when not present, and not allowed when present',
  })
  .meta(
    celRules({
      rule: 'self.present ? !has(self.reason) : has(self.reason)',
      message: 'presence.reason is required when not present, and not allowed when present',
    }),
  );
export type Presence = z.infer<typeof Presence>;

export const Device = z.object({
  id: z.string().min(1).max(128),
  name: z.string().max(128),
  model: z.string().max(128),
  platform: Platform,
  os: z.string().max(32).describe('OS version, or API level on Android.'),
  physical: z.boolean(),
  class: DeviceClass,
  state: DeviceState,
  presence: Presence.optional(),
});
export type Device = z.infer<typeof Device>;

export const PlatformCapacity = z.object({
  limit: count,
  running: count,
  evictable: count.describe('Idle warm simulators that could be shut down to make room.'),
  atRamBudget: z.boolean(),
});
export type PlatformCapacity = z.infer<typeof PlatformCapacity>;

export const Capacity = z.object({
  global: z.object({ limit: count, running: count, evictable: count }),
  platforms: z.object({ ios: PlatformCapacity.optional(), android: PlatformCapacity.optional() }),
});
export type Capacity = z.infer<typeof Capacity>;

export const Catalog = z.object({
  platforms: z.array(Platform).max(2),
  models: z
    .array(z.object({ name: z.string().max(128), platform: Platform, class: DeviceClass }))
    .max(256),
  runtimes: z.array(z.object({ platform: Platform, version: z.string().max(32) })).max(256),
});
export type Catalog = z.infer<typeof Catalog>;

/** One request waiting in an agent's own queue, with its one reason. */
export const AgentQueueEntry = z
  .object({
    id: z.string().max(253),
    holder: z.string().max(100).optional(),
    platform: Platform,
    model: z.string().max(128).optional(),
    physical: z.boolean().optional(),
    queuedAt: timestamp.optional(),
    reason: WaitingReason,
    capacityReason: CapacityReason.optional(),
  })
  .refine((e) => e.capacityReason === undefined || e.reason === 'full', {
    message: 'capacityReason is allowed only with reason full',
    path: ['capacityReason'],
  })
  .meta(
    celRules({
      rule: "!has(self.capacityReason) || self.reason == 'full'",
      message: 'capacityReason is allowed only with reason full',
    }),
  );
export type AgentQueueEntry = z.infer<typeof AgentQueueEntry>;

export const WorkerStatus = z.object({
  protocol: z.number().int().min(0).max(1000),
  agentVersion: z.string().max(64),
  health: Health,
  endpoint: z.string().max(512).optional().describe("The agent's exec URL."),
  capabilities: z
    .array(z.object({ name: z.string().max(63), available: z.boolean() }))
    .max(64)
    .default([]),
  catalog: Catalog.optional().describe('Absent until the agent has read its drivers.'),
  capacity: Capacity.optional().describe('Absent until the agent has read its drivers.'),
  queueDepth: count.default(0),
  physicalQueueDepth: count.default(0),
  queue: z
    .array(AgentQueueEntry)
    .max(50)
    .default([])
    .describe('The first waiting entries of its own queue.'),
  devices: z.array(Device).max(512).default([]),
  slots: z.string().max(32).optional().describe('running/limit, for the printer column.'),
  deviceCount: count.optional().describe('How many devices, for the printer column.'),
});
export type WorkerStatus = z.infer<typeof WorkerStatus>;

// ---------------------------------------------------------------------------------------------
// LeaseRequest (namespaced): what a client asks for.

export const DeviceSpec = z.object({
  platform: Platform,
  model: z.string().min(1).max(128).optional().describe('Model name, any case ("iPhone 16").'),
  class: DeviceClass.optional().describe(
    'phone or tablet; a request naming neither class nor model means phone.',
  ),
  os: OsSpec.optional(),
  physical: z
    .boolean()
    .optional()
    .describe('A physical device instead of a simulator or emulator.'),
  requires: z
    .array(z.string().min(1).max(63))
    .max(16)
    .optional()
    .describe('Capabilities the worker must have.'),
});
export type DeviceSpec = z.infer<typeof DeviceSpec>;

const LeaseRequestSpecFields = DeviceSpec.extend({
  noWait: z.boolean().optional().describe('Fail with NO_CAPACITY instead of waiting.'),
  waitTimeoutSeconds: z.number().int().min(1).max(86_400).default(300),
  durationSeconds: z
    .number()
    .int()
    .min(1)
    .max(604_800)
    .default(3600)
    .describe(
      "Lease lifetime, counted from the dispatch. The one field that may change: it may only grow (kubectl simlock extend), up to the controller's --max-lease-duration.",
    )
    .meta(
      celRules({
        rule: 'self >= oldSelf',
        message: 'spec.durationSeconds may only grow: a lease is extended, never shortened',
      }),
    ),
  holder: z.string().max(100).optional().describe('Who holds it: ci, local-agent, a job name.'),
  holderSession: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
      message: 'holderSession must be the name of a coordination.k8s.io Lease',
    })
    .optional()
    .describe(
      'The coordination.k8s.io Lease (same namespace) the holder renews; with holderRenewSeconds.',
    ),
  holderRenewSeconds: z
    .number()
    .int()
    .min(1)
    .max(3600)
    .optional()
    .describe(
      'The holder renews holderSession at least this often; a request whose holder misses it by more than this is released (HolderGone).',
    ),
  idleTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(604_800)
    .optional()
    .describe(
      'Released (Idle) after this long with no exec through the proxy; never while one runs.',
    ),
});

/** CEL: each of `fields` is as it was; `required` ones are always there, the others maybe not. */
function unchanged(fields: readonly string[], required: readonly string[]): string {
  return fields
    .map((key) =>
      required.includes(key)
        ? `self.${key} == oldSelf.${key}`
        : `(has(self.${key}) ? has(oldSelf.${key}) && self.${key} == oldSelf.${key} : !has(oldSelf.${key}))`,
    )
    .join(' && ');
}

const IDLE_WITHIN_DURATION = 'spec.idleTimeoutSeconds must not be longer than spec.durationSeconds';
const SESSION_WITH_RENEW =
  'spec.holderSession and spec.holderRenewSeconds go together: name the session and how often it is renewed';

export const LeaseRequestSpec = LeaseRequestSpecFields.refine(
  (spec) =>
    spec.idleTimeoutSeconds === undefined || spec.idleTimeoutSeconds <= spec.durationSeconds,
  { message: IDLE_WITHIN_DURATION, path: ['idleTimeoutSeconds'] },
)
  .refine(
    (spec) => (spec.holderSession === undefined) === (spec.holderRenewSeconds === undefined),
    {
      message: SESSION_WITH_RENEW,
      path: ['holderRenewSeconds'],
    },
  )
  .meta(
    celRules(
      {
        rule: unchanged(
          Object.keys(LeaseRequestSpecFields.shape).filter((key) => key !== 'durationSeconds'),
          ['platform'],
        ),
        message: 'spec is immutable after creation, except spec.durationSeconds, which may grow',
      },
      {
        rule: '!has(self.idleTimeoutSeconds) || self.idleTimeoutSeconds <= self.durationSeconds',
        message: IDLE_WITHIN_DURATION,
        fieldPath: '.idleTimeoutSeconds',
      },
      {
        rule: 'has(self.holderSession) == has(self.holderRenewSeconds)',
        message: SESSION_WITH_RENEW,
        fieldPath: '.holderRenewSeconds',
      },
    ),
  );
export type LeaseRequestSpec = z.infer<typeof LeaseRequestSpec>;

export const RequestPhase = z.enum([
  'Pending',
  'Waiting',
  'Dispatched',
  'Granted',
  'Failed',
  'Released',
]);
export type RequestPhase = z.infer<typeof RequestPhase>;

export const WorkerReason = z
  .object({
    worker: z.string().min(1).max(253),
    reason: WaitingReason,
    capacityReason: CapacityReason.optional(),
  })
  .refine((e) => e.capacityReason === undefined || e.reason === 'full', {
    message: 'capacityReason is allowed only with reason full',
    path: ['capacityReason'],
  })
  .meta(
    celRules({
      rule: "!has(self.capacityReason) || self.reason == 'full'",
      message: 'capacityReason is allowed only with reason full',
    }),
  );
export type WorkerReason = z.infer<typeof WorkerReason>;

export const GrantedDevice = z.object({
  id: z.string().max(128),
  name: z.string().max(128),
  model: z.string().max(128),
  platform: Platform,
  os: z.string().max(32),
  class: DeviceClass.optional(),
  physical: z.boolean(),
});
export type GrantedDevice = z.infer<typeof GrantedDevice>;

export const ErrorBody = z.object({
  code: ErrorCodeSchema,
  message: z.string().max(1024),
  details: z.record(z.string(), z.string().max(256)).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** metav1.Condition. */
export const Condition = z.object({
  type: z.string().max(316),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.number().int().min(0).optional(),
  lastTransitionTime: timestamp,
  reason: z.string().max(1024),
  message: z.string().max(32_768),
});
export type Condition = z.infer<typeof Condition>;

export const MAX_WORKER_REASONS = 5000;

export const LeaseRequestStatus = z.object({
  phase: RequestPhase,
  queuedAt: timestamp.optional(),
  position: z.number().int().min(0).optional(),
  workers: z
    .array(WorkerReason)
    .max(MAX_WORKER_REASONS)
    .optional()
    .describe('One reason per known worker while the request waits, in worker name order.')
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['worker'] }),
  summary: shortText.optional().describe('Counts of the reasons, for the printer column.'),
  worker: z.string().max(253).optional(),
  lease: z.string().max(253).optional(),
  device: GrantedDevice.optional(),
  expiresAt: timestamp.optional().describe('When the lease ends, once granted (moves on extend).'),
  error: ErrorBody.optional(),
  conditions: z
    .array(Condition)
    .max(8)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  observedGeneration: z.number().int().min(0).optional(),
});
export type LeaseRequestStatus = z.infer<typeof LeaseRequestStatus>;

// ---------------------------------------------------------------------------------------------
// Lease (namespaced, named as its request): one dispatch to one worker, answered by its agent.

const LeaseSpecFields = z.object({
  worker: name,
  device: DeviceSpec,
  expiresAt: timestamp.describe('When the lease ends; the controller moves it later on extend.'),
  durationSeconds: z
    .number()
    .int()
    .min(1)
    .max(604_800)
    .optional()
    .describe('The request duration expiresAt counts (expiresAt minus it is the dispatch).'),
  holder: z.string().max(100).optional(),
});
export const LeaseSpec = LeaseSpecFields.meta(
  celRules({
    rule: unchanged(['worker', 'device', 'holder'], ['worker', 'device']),
    message: 'spec is immutable after creation, except expiresAt and durationSeconds (extend)',
  }),
);
export type LeaseSpec = z.infer<typeof LeaseSpec>;

export const LeasePhase = z.enum(['Pending', 'Granted', 'Refused', 'Released', 'Expired', 'Lost']);
export type LeasePhase = z.infer<typeof LeasePhase>;

// The refusal is a claim from an agent, possibly of another version: the API server keeps it loose
// (any code, any capacity reason, string or number) and the controller checks it against the
// contract before it believes it (parseRefusal in refusal.ts).
export const Refusal = z.object({
  code: z.string().min(1).max(64),
  message: z.string().max(1024).default(''),
  capacityReason: z.union([z.string().max(64), z.number().int()]).optional(),
});
export type Refusal = z.infer<typeof Refusal>;

/** Exec activity on a lease, written by the exec proxy at most once per 30 s per lease. */
export const LeaseActivity = z.object({
  lastExecAt: timestamp.describe('When an exec last started or was last seen running.'),
  runningUntil: timestamp
    .optional()
    .describe('An exec runs at least until then (renewed while it runs).'),
});
export type LeaseActivity = z.infer<typeof LeaseActivity>;

export const LeaseStatus = z.object({
  phase: LeasePhase,
  device: GrantedDevice.optional(),
  source: z.enum(['warm', 'cold']).optional(),
  refusal: Refusal.optional(),
  grantedAt: timestamp.optional(),
  message: z.string().max(1024).optional(),
  activity: LeaseActivity.optional(),
});
export type LeaseStatus = z.infer<typeof LeaseStatus>;

// ---------------------------------------------------------------------------------------------
// Objects as read from the API server. Metadata is kept loose: the API server owns it.

export const ObjectMeta = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  creationTimestamp: z.union([z.string(), z.date()]).optional(),
  deletionTimestamp: z.union([z.string(), z.date()]).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  finalizers: z.array(z.string()).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMeta>;

export const WorkerObject = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: WorkerSpec.default({ drained: false }),
  status: WorkerStatus.optional(),
});
export type WorkerObject = z.infer<typeof WorkerObject>;

export const LeaseRequestObject = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: LeaseRequestSpec,
  status: LeaseRequestStatus.optional(),
});
export type LeaseRequestObject = z.infer<typeof LeaseRequestObject>;

export const LeaseObject = z.object({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMeta,
  spec: LeaseSpec,
  status: LeaseStatus.optional(),
});
export type LeaseObject = z.infer<typeof LeaseObject>;
