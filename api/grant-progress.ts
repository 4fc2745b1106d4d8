// The progress of a grant that must make or boot a device: written by the agent on its Lease,
// copied by the controller to the request, read by the CLI, MCP and the console.
import { z } from 'zod';
import { timestamp } from './schema-parts.js';

/** The slow steps of a grant that must make or start a device, reported while they run. */
export const GrantStage = z.enum(['provisioning', 'booting']);
export type GrantStage = z.infer<typeof GrantStage>;

/** Where a grant that makes or boots a device is, and how long that step should take. */
export const GrantProgress = z.object({
  stage: GrantStage,
  since: timestamp.describe('When the stage began.'),
  model: z
    .string()
    .max(128)
    .optional()
    .describe('The model being made or booted (the agent picks one for a request naming none).'),
  os: z.string().max(32).optional().describe('Its OS version, or API level on Android.'),
  estimatedSeconds: z
    .number()
    .int()
    .min(0)
    .max(86_400)
    .optional()
    .describe('How long the stage should take on this host; absent when there is no basis.'),
  basis: z
    .string()
    .max(256)
    .optional()
    .describe('What the estimate is made from ("median of 5 on this host", "default").'),
});
export type GrantProgress = z.infer<typeof GrantProgress>;
