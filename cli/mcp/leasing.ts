// The MCP tools that act on a lease of the session: lease (with progress while it waits), exec,
// screenshot, extend, release.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { progressLine, workerLabels, type LeaseProgress } from '../../client/index.js';
import { grantLine } from '../format/progress.js';
import { BoundedOutput } from './bounded-output.js';
import type {
  ExecInput,
  ExtendInput,
  LeaseInput,
  ReleaseInput,
  ScreenshotInput,
} from './schemas.js';
import { answer, leaseSummary, type Args, type ToolExtra } from './results.js';
import type { McpSession } from './session.js';

export async function leaseTool(
  session: McpSession,
  args: Args<typeof LeaseInput>,
  extra: ToolExtra,
): Promise<CallToolResult> {
  const token = extra._meta?.progressToken;
  let sent = 0;
  let last = '';
  const onProgress = (progress: LeaseProgress) => {
    if (token === undefined) return;
    const line = progressLine(progress);
    // A watch shows versions that differ only in what the agent does not say: one line each.
    if (line === last) return;
    last = line;
    sent += 1;
    void extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: sent, message: line },
      })
      .catch(() => undefined);
  };
  const spec = Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));
  const handle = await session.lease(spec as typeof args, { signal: extra.signal, onProgress });
  const workers = await session.client.workers().catch(() => []);
  const line = grantLine(handle.request, workerLabels(workers));
  return answer(`${line} (expires at ${handle.expiresAt ?? 'unknown'})`, leaseSummary(handle));
}

export async function execTool(
  session: McpSession,
  args: Args<typeof ExecInput>,
  extra: ToolExtra,
): Promise<CallToolResult> {
  const handle = session.own(args.lease);
  const stdout = new BoundedOutput();
  const stderr = new BoundedOutput();
  const exitCode = await handle.exec(args.tool, args.args ?? [], {
    signal: extra.signal,
    timeoutSeconds: args.timeoutSeconds,
    onOutput: (stream, data) => (stream === 'stdout' ? stdout : stderr).append(data),
  });
  const text = [
    `exit code ${exitCode}`,
    `--- stdout (${stdout.totalBytes} bytes) ---`,
    stdout.text('stdout'),
    `--- stderr (${stderr.totalBytes} bytes) ---`,
    stderr.text('stderr'),
  ].join('\n');
  return answer(text, {
    lease: handle.name,
    exitCode,
    stdout: stdout.text('stdout'),
    stderr: stderr.text('stderr'),
    cutBytes: { stdout: stdout.cutBytes, stderr: stderr.cutBytes },
  });
}

export async function screenshotTool(
  session: McpSession,
  args: Args<typeof ScreenshotInput>,
): Promise<CallToolResult> {
  const handle = session.own(args.lease);
  const png = await handle.screenshot();
  return {
    content: [
      { type: 'image', data: Buffer.from(png).toString('base64'), mimeType: 'image/png' },
      { type: 'text', text: `Screenshot of ${handle.name} (${png.length} bytes)` },
    ],
  };
}

export async function extendTool(
  session: McpSession,
  args: Args<typeof ExtendInput>,
): Promise<CallToolResult> {
  const handle = session.own(args.lease);
  const extended = await handle.extend({ bySeconds: args.bySeconds ?? 3600 });
  const capped = extended.capped ? ' (capped at the maximum lease duration)' : '';
  return answer(`Lease ${handle.name} extended to ${extended.expiresAt}${capped}`, {
    lease: handle.name,
    ...extended,
  });
}

export async function releaseTool(
  session: McpSession,
  args: Args<typeof ReleaseInput>,
): Promise<CallToolResult> {
  const released = await session.release(args.lease);
  return answer(
    released.granted ? `Lease ${released.name} released` : `Request ${released.name} withdrawn`,
    { lease: released.name, released: true },
  );
}
