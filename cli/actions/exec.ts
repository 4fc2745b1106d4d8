// Runs one tool on a leased device through the exec proxy (client/exec.ts). The proxy checks who
// we are by the bearer token our kubeconfig carries (or $SIMLOCK_TOKEN), and whether we may exec.
// Output is written as it arrives; the exit code is the tool's.
import { z } from 'zod';
import { ExecTool, type ExecTool as Tool } from '../../api/index.js';
import { ProxyAccess, execOnLease } from '../../client/index.js';
import { durationFlag, objectName, parseFlags, parseGlobals, usageError } from '../flags.js';
import type { CliIO } from '../io.js';
import { connect } from '../options.js';

const ExecFlags = z.object({
  lease: objectName,
  proxyUrl: z.url({ protocol: /^https?$/ }).optional(),
  execTimeout: durationFlag(1, 3600).optional(),
});

/** `exec <lease> -- adb shell …`, or `adb --lease <lease> shell …`: the tool and its arguments. */
function toolAndArgs(argv: Record<string, unknown>): { tool: Tool; args: string[] } {
  const strings = (value: unknown) => (Array.isArray(value) ? value.map(String) : []);
  const rest = [...strings(argv.command), ...strings(argv.args), ...strings(argv['--'])];
  const named = typeof argv.tool === 'string' ? argv.tool : rest.shift();
  const tool = ExecTool.safeParse(named);
  if (!tool.success) {
    throw usageError(
      'TOOL',
      `the tool must be simctl, devicectl or adb (got ${named ?? 'nothing'})`,
    );
  }
  return { tool: tool.data, args: rest };
}

export async function exec(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  const flags = parseFlags(ExecFlags, argv, {
    lease: typeof argv.tool === 'string' ? '--lease' : '<lease>',
    proxyUrl: '--proxy-url',
    execTimeout: '--exec-timeout',
  });
  const { tool, args } = toolAndArgs(argv);
  const session = connect(globals);
  const proxy = new ProxyAccess(session.client, {
    proxyUrl: flags.proxyUrl,
    simlockNamespace: globals.simlockNamespace,
  });
  await proxy.resolve();
  // Ctrl-C stops the remote tool too: the proxy ends it when we hang up.
  const hangUp = new AbortController();
  const unsubscribe = io.onStop(() => hangUp.abort());
  try {
    return await execOnLease(proxy, session.namespace, flags.lease, tool, args, {
      timeoutSeconds: flags.execTimeout,
      signal: hangUp.signal,
      onOutput: (stream, data) =>
        stream === 'stdout' ? process.stdout.write(data) : io.writeErr(data),
    });
  } catch (error) {
    if (hangUp.signal.aborted) return 130;
    throw error;
  } finally {
    unsubscribe();
  }
}
