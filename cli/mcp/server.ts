// The MCP server of `kubectl simlock mcp` (docs/MCP.md): the tools a coding agent calls, each a
// call of the typed client (client/) on the session's leases. A tool never throws: a failure is a
// tool error whose text starts with its code (NO_CAPACITY: …) and whose structured content is
// the plugin's error JSON; the SDK answers arguments that do not fit a schema the same way,
// naming the field. The device of a session's lease that crashes and is booted again under it is
// told as a logging notification (`notifications/message`, logger `simlock`): warning when it
// crashed, info when it is back, with the lease, the Event reason and the recovery.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { toSimlockError } from '../../client/index.js';
import { listDevicesTool, listLeasesTool, whyWaitingTool } from './reads.js';
import { execTool, extendTool, leaseTool, releaseTool, screenshotTool } from './leasing.js';
import {
  ExecInput,
  ExtendInput,
  LeaseInput,
  ListDevicesInput,
  ListLeasesInput,
  ReleaseInput,
  ScreenshotInput,
  WhyWaitingInput,
} from './schemas.js';
import type { ToolExtra } from './results.js';
import type { McpSession } from './session.js';

function failure(error: unknown): CallToolResult {
  const simlock = toSimlockError(error);
  return {
    content: [{ type: 'text', text: `${simlock.code}: ${simlock.message}` }],
    structuredContent: simlock.toJSON(),
    isError: true,
  };
}

/** Runs a tool's body; any failure becomes a tool error (the server goes on). */
function guarded<A>(
  body: (args: A, extra: ToolExtra) => Promise<CallToolResult>,
): (args: A, extra: ToolExtra) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return await body(args, extra);
    } catch (error) {
      return failure(error);
    }
  };
}

export function createMcpServer(session: McpSession, version: string): McpServer {
  const server = new McpServer({ name: 'simlock', version }, { capabilities: { logging: {} } });
  session.onRecovery = (notice) =>
    void server.server
      .sendLoggingMessage({
        level: notice.kind === 'recovering' ? 'warning' : 'info',
        logger: 'simlock',
        data: {
          lease: notice.lease,
          event: notice.reason,
          message: notice.text,
          ...(notice.recovery ? { recovery: notice.recovery } : {}),
        },
      })
      .catch(() => undefined);
  const tool = server.registerTool.bind(server);
  tool(
    'lease',
    {
      title: 'Lease a device',
      description:
        'Ask for an iOS simulator, Android emulator or physical phone and wait for it. While it waits, progress notifications say its place in the queue and, worker by worker, why it waits. Answers the device, or the error code (NO_CAPACITY, UNKNOWN_MODEL, RUNTIME_MISSING, TIMEOUT, …) and its message. The lease is this session’s: it is released when the session ends. Should its device crash, the agent boots it again under the lease: a logging notification (warning) says so and when it should be back, another (info) when it is; execs meanwhile fail UNAVAILABLE.',
      inputSchema: LeaseInput,
    },
    guarded((args, extra) => leaseTool(session, args, extra)),
  );
  tool(
    'why_waiting',
    {
      title: 'Why requests wait',
      description:
        "This session's requests that are still waiting, each with its place in the queue, one reason per worker, and the few smallest changes that would let it run (undrain a worker, a lease ending, a runtime installed, a higher running limit; cheapest first, at most three) or that nothing would; `all` for every waiting request in the namespace.",
      inputSchema: WhyWaitingInput,
    },
    guarded((args) => whyWaitingTool(session, args)),
  );
  tool(
    'list_devices',
    {
      title: 'List devices',
      description: 'The devices of the fleet, worker by worker: model, OS, physical, state.',
      inputSchema: ListDevicesInput,
    },
    guarded((args) => listDevicesTool(session, args)),
  );
  tool(
    'list_leases',
    {
      title: 'List leases',
      description:
        "This session's leases with their devices and expiry; `all` for every lease in the namespace.",
      inputSchema: ListLeasesInput,
    },
    guarded((args) => listLeasesTool(session, args)),
  );
  tool(
    'exec',
    {
      title: 'Run a tool on the leased device',
      description:
        'Runs simctl, devicectl or adb on a device this session leased (its UDID or serial is filled in by the agent). Answers the exit code, stdout and stderr, each cut to 64 KiB (the first and last 32 KiB) with a note of what was cut.',
      inputSchema: ExecInput,
    },
    guarded((args, extra) => execTool(session, args, extra)),
  );
  tool(
    'screenshot',
    {
      title: 'Screenshot of the leased device',
      description: 'A PNG of the screen of a simulator or Android device this session leased.',
      inputSchema: ScreenshotInput,
    },
    guarded((args) => screenshotTool(session, args)),
  );
  tool(
    'extend',
    {
      title: 'Extend a lease',
      description: 'Makes a lease of this session last longer (default one hour more).',
      inputSchema: ExtendInput,
    },
    guarded((args) => extendTool(session, args)),
  );
  tool(
    'release',
    {
      title: 'Release a lease',
      description:
        'Releases a lease of this session and waits until the device is reclaimed (free for others).',
      inputSchema: ReleaseInput,
    },
    guarded((args) => releaseTool(session, args)),
  );
  return server;
}
