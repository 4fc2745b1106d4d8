// The MCP tools' input schemas, made of the contract's own fields (api/), so that a bound or an
// enum is written once: the MCP client sees them as JSON Schema, and the SDK checks every call
// against them, answering a bad argument with an error that names its field.
import { z } from 'zod';
import {
  DeviceClass,
  ExecRequest,
  LeaseRequestSpec,
  MAX_EXEC_ARGS,
  MAX_EXEC_ARG_LENGTH,
  OsSpec,
  Platform,
} from '../../api/index.js';

const spec = LeaseRequestSpec.shape;

/** A lease of this session; may be left out while the session holds exactly one. */
const leaseName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
    message: 'must be a lease name such as lease-x7k2p',
  })
  .optional()
  .describe("The lease's name, as `lease` answered it; optional while the session holds one.");

const everything = z
  .boolean()
  .optional()
  .describe("Every one in the namespace, not only this session's.");

export const LeaseInput = {
  platform: Platform.describe('ios or android.'),
  model: spec.model,
  class: DeviceClass.optional().describe('phone or tablet.'),
  os: OsSpec.optional(),
  physical: spec.physical,
  requires: spec.requires,
  // The contract's defaults (wait 300 s, last 1 h) apply when these are left out.
  waitTimeoutSeconds: spec.waitTimeoutSeconds
    .unwrap()
    .optional()
    .describe('How long to wait for a device before failing with TIMEOUT (default 300).'),
  durationSeconds: spec.durationSeconds
    .unwrap()
    .optional()
    .describe('How long the lease lasts once granted (default 3600); `extend` adds to it.'),
  noWait: spec.noWait,
  idleTimeoutSeconds: spec.idleTimeoutSeconds,
};

export const WhyWaitingInput = { all: everything };

export const ListDevicesInput = {
  worker: z.string().min(1).max(253).optional().describe("Only this worker's (name or label)."),
};

export const ListLeasesInput = { all: everything };

export const ExecInput = {
  lease: leaseName,
  tool: ExecRequest.shape.tool.describe(
    'simctl (iOS simulators), devicectl (physical iPhones and iPads) or adb (Android).',
  ),
  args: z
    .array(z.string().max(MAX_EXEC_ARG_LENGTH))
    .max(MAX_EXEC_ARGS)
    .optional()
    .describe('The arguments after the tool, e.g. ["shell", "getprop", "ro.build.version.sdk"].'),
  timeoutSeconds: ExecRequest.shape.timeoutSeconds.describe(
    'Stop the tool after this long (EXEC_TIMEOUT).',
  ),
};

export const ExtendInput = {
  lease: leaseName,
  bySeconds: z
    .number()
    .int()
    .min(1)
    .max(604_800)
    .optional()
    .describe('How much longer, from the current expiry (default 3600).'),
};

export const ReleaseInput = { lease: leaseName };

export const ScreenshotInput = { lease: leaseName };
