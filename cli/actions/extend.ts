// `kubectl simlock extend <lease> --by 30m | --until <time>`: the client's extend
// (client/extend.ts) grows the request's spec.durationSeconds and waits for the new expiry.
import { z } from 'zod';
import { SimlockError } from '../../api/index.js';
import { extendLease } from '../../client/index.js';
import {
  durationFlag,
  objectName,
  parseFlags,
  parseGlobals,
  rejectOutput,
  usageError,
} from '../flags.js';
import type { CliIO } from '../io.js';
import { connect } from '../options.js';

const ExtendFlags = z.object({
  lease: objectName,
  by: durationFlag(1, 604_800).optional(),
  until: z.iso
    .datetime({ offset: true, message: 'must be a time such as 2026-05-01T18:00:00Z' })
    .optional(),
});

export async function extend(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['json', 'yaml', 'name', 'wide'], 'extend');
  const flags = parseFlags(ExtendFlags, argv, { lease: '<lease>', by: '--by', until: '--until' });
  if ((flags.by === undefined) === (flags.until === undefined))
    throw usageError('--by', 'name one of --by or --until');
  const { client, namespace } = connect(globals);
  let extended;
  try {
    extended = await extendLease(
      client,
      namespace,
      flags.lease,
      flags.by !== undefined ? { bySeconds: flags.by } : { until: new Date(flags.until ?? '') },
    );
  } catch (error) {
    if (error instanceof SimlockError && error.details?.field === 'until')
      throw usageError('--until', error.message.slice('until: '.length));
    throw error;
  }
  const capped = extended.capped ? ' (capped at the maximum lease duration)' : '';
  io.out(`Lease ${flags.lease} extended to ${extended.expiresAt}${capped}`);
  return 0;
}
