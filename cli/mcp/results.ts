// What the MCP tools answer, and what the SDK hands them.
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import type { LeaseHandle } from '../../client/index.js';

/** A tool's arguments as its input shape (schemas.ts) parses them. */
export type Args<Shape extends Record<string, z.ZodType>> = {
  [K in keyof Shape]: z.output<Shape[K]>;
};

/** A tool's answer: the text an agent reads, and the same as JSON. */
export function answer(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** What the SDK hands a tool besides its arguments: the cancel signal, the progress token. */
export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export function leaseSummary(handle: LeaseHandle): Record<string, unknown> {
  return {
    lease: handle.name,
    namespace: handle.namespace,
    worker: handle.worker,
    device: handle.device,
    expiresAt: handle.expiresAt,
  };
}
