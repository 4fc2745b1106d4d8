// The exec contract: what a caller sends to run one tool on a leased device, and the Server-Sent
// Events it gets back. The proxy and the agent parse the same shapes.
import { z } from 'zod';

export const EXEC_TOOLS = ['simctl', 'devicectl', 'adb'] as const;
export const ExecTool = z.enum(EXEC_TOOLS);
export type ExecTool = z.infer<typeof ExecTool>;

export const MAX_EXEC_ARGS = 256;
export const MAX_EXEC_ARG_LENGTH = 8192;
/** Bodies are parsed only up to this size. */
export const MAX_EXEC_BODY_BYTES = 256 * 1024;

export const ExecRequest = z.strictObject({
  tool: ExecTool,
  args: z.array(z.string().max(MAX_EXEC_ARG_LENGTH)).max(MAX_EXEC_ARGS).default([]),
  timeoutSeconds: z.number().int().min(1).max(3600).optional(),
  // base64: each output event's data is the base64 of the bytes of one chunk, so binary output
  // (a screenshot) passes untouched; utf8 (the default) is text, kept whole across chunks.
  encoding: z.enum(['utf8', 'base64']).optional(),
});
export type ExecRequest = z.infer<typeof ExecRequest>;

/** What the proxy sends the agent: the request, and which lease it is for. */
export const AgentExecRequest = ExecRequest.extend({
  namespace: z.string().min(1).max(63),
  lease: z.string().min(1).max(253),
});
export type AgentExecRequest = z.infer<typeof AgentExecRequest>;

export const ExecOutputEvent = z.object({ stream: z.enum(['stdout', 'stderr']), data: z.string() });
export const ExecExitEvent = z.object({ exitCode: z.number().int() });
export const ExecErrorEvent = z.object({ code: z.string().max(64), message: z.string().max(4096) });
export type ExecOutputEvent = z.infer<typeof ExecOutputEvent>;
export type ExecExitEvent = z.infer<typeof ExecExitEvent>;
export type ExecErrorEvent = z.infer<typeof ExecErrorEvent>;

/** One Server-Sent Event in the wire format. */
export function sseFrame(event: 'output' | 'exit' | 'error', data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A JSON error body (HTTP errors of the proxy and the agent). */
export const HttpErrorBody = z.object({
  error: ExecErrorEvent.extend({ details: z.record(z.string(), z.string()).optional() }),
});
export type HttpErrorBody = z.infer<typeof HttpErrorBody>;

/** A screenshot larger than this is not a screenshot. */
export const MAX_SCREENSHOT_BYTES = 32 * 1024 * 1024;

/**
 * Which tool and arguments write a PNG of the device's screen to stdout, if any can (devicectl
 * cannot take one of a physical iPhone or iPad). The console and the client run it.
 */
export function screenshotCommand(device: {
  platform: 'ios' | 'android';
  physical: boolean;
}): { tool: 'simctl' | 'adb'; args: string[] } | undefined {
  if (device.platform === 'android') return { tool: 'adb', args: ['exec-out', 'screencap', '-p'] };
  if (!device.physical) return { tool: 'simctl', args: ['io', 'screenshot', '-'] };
  return undefined;
}
