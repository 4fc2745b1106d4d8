// A leased device that crashed and is being booted again under the same lease: written by the
// agent on its Lease, copied by the controller to the request, read by the CLI, MCP and console.
import { z } from 'zod';
import { count, timestamp } from './schema-parts.js';

/**
 * The condition type on a Lease and its LeaseRequest: True (reason `DeviceCrashed`) while the
 * device is booted again, False (reason `DeviceRecovered`) once it is back. Absent on a lease
 * whose device never crashed. A device past its crash budget ends the lease LEASE_LOST instead.
 */
export const DEVICE_RECOVERING = 'DeviceRecovering';

/** The reasons of the DeviceRecovering condition, and of the Events the controller records. */
export const DeviceRecoveryReason = z.enum(['DeviceCrashed', 'DeviceRecovered']);
export type DeviceRecoveryReason = z.infer<typeof DeviceRecoveryReason>;

/** The Event reasons on the request while its device recovers (one per step). */
export const DEVICE_RECOVERY_EVENTS = {
  recovering: 'DeviceRecovering',
  recovered: 'DeviceRecovered',
} as const;

/** A recovery in progress: since when, why, and when the device should be back. */
export const DeviceRecovery = z.object({
  since: timestamp.describe('When the agent saw the device down and began to boot it again.'),
  cause: z
    .string()
    .max(256)
    .describe('What the agent saw: "shut down", "emulator process exited", "health check failed".'),
  crashes: count.describe('Crashes of this device within the crash window, this one included.'),
  crashBudget: count.describe('Crashes within the window that end the lease LEASE_LOST.'),
  estimatedSeconds: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .optional()
    .describe("How long the boot should take on this host (the grant's boot estimate)."),
});
export type DeviceRecovery = z.infer<typeof DeviceRecovery>;
