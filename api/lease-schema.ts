// Lease: one dispatch of a request to a worker, answered by its agent.
import { z } from 'zod';
import {
  celRules,
  unchanged,
  name,
  leaseSeconds,
  timestamp,
  resourceObject,
} from './schema-parts.js';
import { Condition, DeviceSpec, GrantedDevice } from './lease-request-schema.js';
import { GrantProgress } from './grant-progress.js';
import { DeviceRecovery } from './device-recovery.js';

/** The request a Lease dispatches: in another namespace than the Lease (ADR 0034). */
export const LeaseRequestRef = z.object({
  namespace: name,
  name,
  uid: z.string().min(1).max(64),
});
export type LeaseRequestRef = z.infer<typeof LeaseRequestRef>;

const LeaseSpecFields = z.object({
  worker: name,
  request: LeaseRequestRef.optional().describe(
    "The request this Lease dispatches. The controller always sets it; the Lease lives in its worker's namespace, named by the request's UID.",
  ),
  device: DeviceSpec,
  expiresAt: timestamp.describe('When the lease ends; the controller moves it later on extend.'),
  durationSeconds: leaseSeconds
    .optional()
    .describe('The request duration expiresAt counts (expiresAt minus it is the dispatch).'),
  holder: z.string().max(100).optional(),
});
export const LeaseSpec = LeaseSpecFields.meta(
  celRules({
    rule: unchanged(['worker', 'request', 'device', 'holder'], ['worker', 'device']),
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
  progress: GrantProgress.optional().describe(
    'While Pending: the agent is making or booting the device (written only for slow steps).',
  ),
  recovery: DeviceRecovery.optional().describe(
    'While Granted: the device crashed and the agent is booting it again under this lease.',
  ),
  conditions: z
    .array(Condition)
    .max(8)
    .optional()
    .describe('DeviceRecovering: True while the device is booted again after a crash.')
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }),
});
export type LeaseStatus = z.infer<typeof LeaseStatus>;

export const LeaseObject = resourceObject(LeaseSpec, LeaseStatus);
export type LeaseObject = z.infer<typeof LeaseObject>;
