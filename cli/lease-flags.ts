// The flags of `lease`, checked with zod and turned into a LeaseRequest spec. A bad value is a
// USAGE error naming its flag; the contract's own schema has the last word on every bound.
import { z } from 'zod';
import { DeviceClass, LeaseRequestSpec, OsSpec, PLATFORMS } from '../api/index.js';
import { durationFlag, objectName, parseFlags, usageError } from './flags.js';

const LeaseFlags = z.object({
  platform: z.enum(PLATFORMS, { message: 'must be ios or android' }).optional(),
  device: z.string().min(1).max(128).optional(),
  class: z.enum(DeviceClass.options, { message: 'must be phone or tablet' }).optional(),
  os: OsSpec.optional(),
  physical: z.boolean().optional(),
  requires: z
    .array(z.string().max(1024))
    .max(16)
    .optional()
    // --requires camera --requires nfc, or --requires camera,nfc
    .transform((values) =>
      values?.flatMap((value) => value.split(',')).map((value) => value.trim()),
    )
    .pipe(z.array(z.string().min(1).max(63)).max(16).optional()),
  noWait: z.boolean().optional(),
  timeout: durationFlag(1, 86_400).optional(),
  duration: durationFlag(1, 604_800).optional(),
  holder: z.string().min(1).max(100).optional(),
  name: objectName.optional(),
  idleTimeout: durationFlag(1, 604_800).optional(),
  hold: z.boolean().optional(),
  detach: z.boolean().optional(),
  renewEvery: durationFlag(1, 3600).optional(),
  owner: z
    .string()
    .regex(/^pod\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { message: 'must be pod/NAME' })
    .max(257)
    .optional(),
});

/** --hold renews its session this often unless --renew-every says otherwise. */
export const DEFAULT_RENEW_SECONDS = 10;

const FLAG_NAMES: Record<string, string> = {
  platform: '--platform',
  model: '--device',
  device: '--device',
  class: '--class',
  os: '--os',
  physical: '--physical',
  requires: '--requires',
  noWait: '--no-wait',
  timeout: '--timeout',
  waitTimeoutSeconds: '--timeout',
  duration: '--duration',
  durationSeconds: '--duration',
  holder: '--holder',
  name: '--name',
  idleTimeout: '--idle-timeout',
  idleTimeoutSeconds: '--idle-timeout',
  hold: '--hold',
  detach: '--detach',
  renewEvery: '--renew-every',
  holderRenewSeconds: '--renew-every',
  owner: '--owner',
};

export interface LeaseOrder {
  spec: LeaseRequestSpec;
  /** --name; otherwise the API server makes one from `lease-`. */
  name?: string | undefined;
  /** --hold: stay in the foreground renewing the holder session, release on exit. */
  hold: boolean;
  /** --owner pod/NAME: the pod that owns the request. */
  ownerPod?: string | undefined;
}

/** Flags in, the request to create out; throws a USAGE error naming the first bad flag. */
export function leaseOrder(argv: unknown): LeaseOrder {
  const flags = parseFlags(LeaseFlags, argv, FLAG_NAMES);
  if (flags.platform === undefined) throw usageError('--platform', 'is required: ios or android');
  if (flags.hold === true && flags.detach === true)
    throw usageError('--hold', 'and --detach go different ways: name one');
  if (flags.renewEvery !== undefined && flags.hold !== true)
    throw usageError('--renew-every', 'needs --hold (only a holder in the foreground renews)');
  const hold = flags.hold === true;
  const spec = {
    platform: flags.platform,
    ...(flags.device !== undefined ? { model: flags.device } : {}),
    ...(flags.class !== undefined ? { class: flags.class } : {}),
    ...(flags.os !== undefined ? { os: flags.os } : {}),
    ...(flags.physical === true ? { physical: true } : {}),
    ...(flags.requires !== undefined && flags.requires.length > 0
      ? { requires: flags.requires }
      : {}),
    ...(flags.noWait === true ? { noWait: true } : {}),
    ...(flags.timeout !== undefined ? { waitTimeoutSeconds: flags.timeout } : {}),
    ...(flags.duration !== undefined ? { durationSeconds: flags.duration } : {}),
    ...(flags.holder !== undefined ? { holder: flags.holder } : {}),
    ...(flags.idleTimeout !== undefined ? { idleTimeoutSeconds: flags.idleTimeout } : {}),
    // The session's name is filled in once it exists (lease.ts); the interval is checked here.
    ...(hold
      ? { holderSession: 'pending', holderRenewSeconds: flags.renewEvery ?? DEFAULT_RENEW_SECONDS }
      : {}),
  };
  // The contract's schema checks the spec the API server will check; it fills in the defaults.
  return {
    spec: parseFlags(LeaseRequestSpec, spec, FLAG_NAMES),
    name: flags.name,
    hold,
    ownerPod: flags.owner?.slice('pod/'.length),
  };
}
