// Worker (cluster-scoped): spec set by operators, status (the view) written by its agent.
import { z } from 'zod';
import { CapacityReason, Platform, WaitingReason } from './reasons.js';
import {
  capacityReasonOnlyWhenFull,
  DeviceClass,
  celRules,
  count,
  timestamp,
  resourceObject,
} from './schema-parts.js';

export const WorkerSpec = z.object({
  drained: z.boolean().default(false).describe('A drained worker takes no new leases.'),
  label: z
    .string()
    .max(63)
    .optional()
    .describe('Display name; a worker without one is shown by its name.'),
  unquarantine: z
    .array(
      z.object({
        device: z.string().min(1).max(128),
        at: timestamp.describe('When an operator asked; a quarantine begun before it ends.'),
      }),
    )
    .max(512)
    .optional()
    .describe(
      'Devices an operator put back in service (`kubectl simlock device unquarantine`): the agent ends a quarantine that began before `at`.',
    )
    .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['device'] }),
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
  quarantine: z
    .object({
      reason: z.string().max(256),
      since: timestamp,
      retries: count.optional().describe('Retries (boot and health check) made so far.'),
      nextRetryAt: timestamp
        .optional()
        .describe('When the agent tries it again; absent once it waits for an operator.'),
    })
    .optional()
    .describe('Why and since when a quarantined device is out of service.'),
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
export const AgentQueueEntry = capacityReasonOnlyWhenFull(
  z.object({
    id: z.string().max(253),
    holder: z.string().max(100).optional(),
    platform: Platform,
    model: z.string().max(128).optional(),
    physical: z.boolean().optional(),
    queuedAt: timestamp.optional(),
    reason: WaitingReason,
    capacityReason: CapacityReason.optional(),
  }),
);
export type AgentQueueEntry = z.infer<typeof AgentQueueEntry>;

/** An agent's outbound connection to the exec proxy, as the agent sees it. */
export const WorkerTunnel = z.object({
  connected: z.boolean(),
  since: timestamp.optional().describe('When it connected, or when it was last lost.'),
  message: z
    .string()
    .max(512)
    .optional()
    .describe('Why it is not connected: the refusal or the error of the last try.'),
  proxy: z
    .string()
    .max(512)
    .optional()
    .describe('The exec proxy replica that holds it, as that replica named itself.'),
});
export type WorkerTunnel = z.infer<typeof WorkerTunnel>;

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
  disk: z
    .object({
      freeGiB: count,
      lowBelowGiB: count,
      low: z.boolean(),
    })
    .optional()
    .describe(
      'Free space where the agent keeps its devices; while low it makes no device and deletes idle ones it made.',
    ),
  limitsBasis: z
    .string()
    .max(256)
    .optional()
    .describe(
      'Where the limits come from: "set in the agent config", or "derived from 10 cores, 32 GiB: …".',
    ),
  deviceCount: count.optional().describe('How many devices, for the printer column.'),
  tunnel: WorkerTunnel.optional().describe(
    "The agent's tunnel to the exec proxy (hosts behind NAT, ADR 0024); absent when it has none.",
  ),
});
export type WorkerStatus = z.infer<typeof WorkerStatus>;

export const WorkerObject = resourceObject(WorkerSpec.default({ drained: false }), WorkerStatus);
export type WorkerObject = z.infer<typeof WorkerObject>;

/** A worker's heartbeat as read: its agent's coordination.k8s.io Lease (`heartbeatLeaseName`). */
export const HeartbeatLease = z.object({
  metadata: z.object({ name: z.string().max(253) }),
  spec: z
    .object({
      renewTime: z.string().max(64).optional(),
      leaseDurationSeconds: z.number().int().min(0).max(86_400).optional(),
    })
    .optional(),
});
export type HeartbeatLease = z.infer<typeof HeartbeatLease>;
