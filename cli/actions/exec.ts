// Runs one tool on a leased device through the exec proxy. The proxy checks who we are by the
// bearer token our kubeconfig carries (or --token / $SIMLOCK_TOKEN), and whether we may exec.
// Output is written as it arrives; the exit code is the tool's.
import { z } from 'zod';
import {
  ExecTool,
  SimlockError,
  execThroughProxy,
  type ExecTool as Tool,
} from '../../api/index.js';
import { durationFlag, objectName, parseFlags, parseGlobals, usageError } from '../flags.js';
import { kubeconfigBearerToken } from '../../runtime/index.js';
import type { CliIO } from '../io.js';
import { connect, type Session } from '../options.js';

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

async function proxyUrl(session: Session, flag: string | undefined): Promise<string> {
  const fromEnvironment = flag ?? process.env.SIMLOCK_PROXY_URL;
  if (fromEnvironment) return fromEnvironment;
  const namespace = session.globals.simlockNamespace;
  try {
    const map = (await session.client.get(
      `/api/v1/namespaces/${namespace}/configmaps/simlock`,
    )) as { data?: { proxyUrl?: unknown } };
    if (typeof map.data?.proxyUrl === 'string' && /^https?:\/\//.test(map.data.proxyUrl))
      return map.data.proxyUrl;
  } catch {
    // fall through to the error below
  }
  throw new SimlockError(
    'UNAVAILABLE',
    `no exec proxy known: pass --proxy-url, set SIMLOCK_PROXY_URL, or install the chart (ConfigMap ${namespace}/simlock)`,
  );
}

/** The bearer token the kubeconfig gives us (a static token, or one an exec plugin makes). */
async function bearerToken(session: Session): Promise<string> {
  if (process.env.SIMLOCK_TOKEN) return process.env.SIMLOCK_TOKEN;
  const token = await kubeconfigBearerToken(session.client);
  if (!token) {
    throw new SimlockError(
      'UNAUTHENTICATED',
      'the exec proxy needs a bearer token: this kubeconfig user has none (client certificates are not forwarded); set SIMLOCK_TOKEN',
    );
  }
  return token;
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
  const url = await proxyUrl(session, flags.proxyUrl);
  const token = await bearerToken(session);
  // Ctrl-C stops the remote tool too: the proxy ends it when we hang up.
  const hangUp = new AbortController();
  const unsubscribe = io.onStop(() => hangUp.abort());
  try {
    const { exitCode } = await execThroughProxy({
      url,
      token,
      namespace: session.namespace,
      lease: flags.lease,
      tool,
      args,
      ...(flags.execTimeout ? { timeoutSeconds: flags.execTimeout } : {}),
      signal: hangUp.signal,
      onOutput: (stream, data) =>
        stream === 'stdout' ? process.stdout.write(data) : io.writeErr(data),
    });
    return exitCode;
  } catch (error) {
    if (hangUp.signal.aborted) return 130;
    throw error;
  } finally {
    unsubscribe();
  }
}
