// `kubectl simlock mcp`: an MCP server on stdin and stdout for a coding agent (docs/MCP.md), with
// the person's kubeconfig. It runs until the client hangs up (stdin ends), Ctrl-C or SIGTERM, and
// then releases the session's leases; killed outright, its holder session stops being renewed and
// the controller releases them within --renew-every (HolderGone).
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { SIMLOCK_VERSION } from '../../api/index.js';
import { SimlockClient } from '../../client/index.js';
import { durationFlag, parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import type { CliIO } from '../io.js';
import { DEFAULT_RENEW_SECONDS } from '../lease-flags.js';
import { createMcpServer } from '../mcp/server.js';
import { McpSession } from '../mcp/session.js';
import { connect } from '../options.js';

const McpFlags = z.object({
  renewEvery: durationFlag(1, 3600).default(DEFAULT_RENEW_SECONDS),
  proxyUrl: z.url({ protocol: /^https?$/ }).optional(),
});

export async function mcp(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, [], 'mcp');
  const flags = parseFlags(McpFlags, argv, {
    renewEvery: '--renew-every',
    proxyUrl: '--proxy-url',
  });
  const connection = connect(globals);
  const client = new SimlockClient(connection.client, connection.namespace, {
    proxyUrl: flags.proxyUrl,
    simlockNamespace: globals.simlockNamespace,
    requestTimeoutMs: connection.requestTimeoutMs,
  });
  // stdout is the protocol's: everything else goes to stderr.
  const session = await McpSession.start(client, flags.renewEvery, (line) =>
    io.err(`warning: ${line}`),
  );
  let hungUp: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (hungUp = resolve));
  process.stdin.once('end', hungUp);
  process.stdin.once('close', hungUp);
  const unsubscribe = io.onStop(hungUp);
  const server = createMcpServer(session, SIMLOCK_VERSION);
  try {
    await server.connect(new StdioServerTransport());
    io.err(
      `simlock MCP server: namespace ${session.namespace}, holder session ${session.holder.name} (renewed every ${flags.renewEvery}s)`,
    );
    await ended;
  } finally {
    unsubscribe();
    await session.close();
    await server.close().catch(() => undefined);
  }
  io.err('simlock MCP server: session closed, its leases released');
  return 0;
}
