// `kubectl simlock why <request>`: the client's whyWaiting (client/why.ts), which reads the
// request, the Workers and the Leases with the caller's credentials and asks api's routing stages
// about changed views. Prints one line per change, or -o json / yaml.
import { z } from 'zod';
import { whyWaiting } from '../../client/index.js';
import { objectName, parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import { serialise } from '../format/output.js';
import type { CliIO } from '../io.js';
import { connect } from '../options.js';

const WhyFlags = z.object({ request: objectName });

export async function why(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['json', 'yaml'], 'why');
  const flags = parseFlags(WhyFlags, argv, { request: '<request>' });
  const { client, namespace } = connect(globals);
  const answer = await whyWaiting(client, namespace, flags.request, {
    now: io.now(),
    warn: (line) => io.err(`warning: ${line}`),
  });
  const text = serialise(answer, globals.output);
  if (text !== undefined) {
    io.out(text);
    return 0;
  }
  io.out(`Request ${answer.name}: ${answer.phase}`);
  for (const line of answer.lines) io.out(`  ${line}`);
  return 0;
}
