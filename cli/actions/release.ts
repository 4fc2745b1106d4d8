// `kubectl simlock release <lease>`: the client's release (client/release.ts), which deletes the
// LeaseRequest and waits until it is gone, or --force.
import { z } from 'zod';
import { forceReleaseLease, releaseLease } from '../../client/index.js';
import { durationFlag, objectName, parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import { resourceName } from '../format/output.js';
import type { CliIO } from '../io.js';
import { connect } from '../options.js';

const ReleaseFlags = z.object({
  lease: objectName,
  noWait: z.boolean().default(false),
  force: z.boolean().default(false),
  timeout: durationFlag(1, 3600).default(60),
});

export async function release(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['name', 'wide'], 'release');
  const flags = parseFlags(ReleaseFlags, argv, {
    lease: '<lease>',
    noWait: '--no-wait',
    timeout: '--timeout',
    force: '--force',
  });
  const { client, namespace } = connect(globals);
  if (flags.force) {
    await forceReleaseLease(client, namespace, flags.lease);
    io.out(`Lease ${flags.lease} force-released`);
    return 0;
  }
  const { granted } = await releaseLease(client, namespace, flags.lease, {
    wait: !flags.noWait,
    timeoutSeconds: flags.timeout,
  });
  if (globals.output === 'name') io.out(`${resourceName('leaseRequest', flags.lease)} deleted`);
  else io.out(granted ? `Lease ${flags.lease} released` : `Request ${flags.lease} withdrawn`);
  return 0;
}
