// LeaseRequest: what a person or a CI job asks for, and what the controller writes back.
import { z } from 'zod';
import { CapacityReason, Platform, WaitingReason } from './reasons.js';
import { ErrorCodeSchema } from './errors.js';
import { GrantProgress } from './grant-progress.js';
import { DeviceRecovery } from './device-recovery.js';
import { GrantEstimate } from './grant-estimate.js';
import {
  capacityReasonOnlyWhenFull,
  DeviceClass,
  OsSpec,
  celRules,
  unchanged,
  name,
  leaseSeconds,
  shortText,
  timestamp,
  resourceObject,
} from './schema-parts.js';

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
  durationSeconds: leaseSeconds
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
  idleTimeoutSeconds: leaseSeconds
    .optional()
    .describe(
      'Released (Idle) after this long with no exec through the proxy; never while one runs.',
    ),
});

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

export const WorkerReason = capacityReasonOnlyWhenFull(
  z.object({
    worker: z.string().min(1).max(253),
    reason: WaitingReason,
    capacityReason: CapacityReason.optional(),
  }),
);
export type WorkerReason = z.infer<typeof WorkerReason>;

export const MAX_WORKER_REASONS = 5000;

const ONE_WORKER_OR_NAMES =
  'an item of status.workers names its workers in exactly one of worker and names';

/**
 * An item of `status.workers`: a reason and the workers that have it (`names`), as the controller
 * writes it (ADR 0033), or one worker's reason (`worker`), as an older controller wrote each.
 * Exactly one of `worker` and `names`. Read it per worker with `reasonsByWorker`.
 */
export const WorkerReasonItem = capacityReasonOnlyWhenFull(
  z.object({
    worker: name.optional().describe('The one worker of an item written per worker.'),
    names: z
      .array(name)
      .min(1)
      .max(MAX_WORKER_REASONS)
      .optional()
      .describe('The workers with this reason, in name order.')
      .meta({ 'x-kubernetes-list-type': 'atomic' }),
    reason: WaitingReason,
    capacityReason: CapacityReason.optional(),
  }),
  {
    rule: 'has(self.worker) != has(self.names)',
    message: ONE_WORKER_OR_NAMES,
    holds: (item) => (item.worker === undefined) !== (item.names === undefined),
    path: ['names'],
  },
);
export type WorkerReasonItem = z.infer<typeof WorkerReasonItem>;

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

export const LeaseRequestStatus = z.object({
  phase: RequestPhase,
  queuedAt: timestamp.optional(),
  position: z.number().int().min(0).optional(),
  workers: z
    .array(WorkerReasonItem)
    .max(MAX_WORKER_REASONS)
    .optional()
    .describe(
      "While the request waits, one reason per known worker, grouped: each item a reason and the workers that have it (names), in the reasons' order.",
    )
    // Atomic, not a list-map keyed by worker: managed fields then track the list as one field
    // instead of each worker's entry, which halves what a waiting request's status write costs
    // the API server (ADR 0017). Grouped by reason, a thousand workers' reasons weigh a fifth of
    // one item per worker (ADR 0033). Only the controller writes it, every Worker named once.
    .meta({ 'x-kubernetes-list-type': 'atomic' }),
  summary: shortText.optional().describe('Counts of the reasons, for the printer column.'),
  estimate: GrantEstimate.optional().describe(
    'While Waiting: when it should be granted and how that was worked out; rewritten only when it moves.',
  ),
  worker: z.string().max(253).optional(),
  lease: z
    .string()
    .max(253)
    .optional()
    .describe("The name of the request's Lease, once dispatched."),
  leaseNamespace: z
    .string()
    .max(63)
    .optional()
    .describe("The namespace of the request's Lease: its worker's (ADR 0034)."),
  device: GrantedDevice.optional(),
  expiresAt: timestamp.optional().describe('When the lease ends, once granted (moves on extend).'),
  durationSeconds: leaseSeconds
    .optional()
    .describe(
      "The length expiresAt counts from the dispatch, once granted: spec.durationSeconds, or the controller's --max-lease-duration when less.",
    ),
  progress: GrantProgress.optional().describe(
    "While Dispatched: the agent's progress making or booting the device, copied from its Lease.",
  ),
  recovery: DeviceRecovery.optional().describe(
    'While Granted: the device crashed and is being booted again, copied from its Lease.',
  ),
  error: ErrorBody.optional(),
  conditions: z
    .array(Condition)
    .max(8)
    .optional()
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
  observedGeneration: z.number().int().min(0).optional(),
});
export type LeaseRequestStatus = z.infer<typeof LeaseRequestStatus>;

export const LeaseRequestObject = resourceObject(LeaseRequestSpec, LeaseRequestStatus);
export type LeaseRequestObject = z.infer<typeof LeaseRequestObject>;
