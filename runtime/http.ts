// What the proxy's and the agent's HTTP servers share: JSON errors with the contract's status,
// Server-Sent Events written with backpressure, and a Prometheus endpoint.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { SimlockError, httpStatusFor, type ErrorCode } from '../api/index.js';

/** Answers `{"error": {code, message, details?}}` with the code's HTTP status (or `status`). */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  details?: Record<string, string>,
  status = httpStatusFor(code),
): void {
  if (res.headersSent) return;
  const body = JSON.stringify(new SimlockError(code, message, details).toJSON());
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.end(body);
}

/** Starts an event stream: 200, text/event-stream, headers sent now. */
export function startEventStream(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('content-type', 'text/event-stream');
  res.setHeader('cache-control', 'no-cache');
  res.flushHeaders();
}

/**
 * Writes a chunk; when the client reads slower than we write, waits until it drains (or goes
 * away), so the reader's pace reaches whatever produces the chunks.
 */
export async function writeWithBackpressure(
  res: ServerResponse,
  chunk: string | Uint8Array,
): Promise<void> {
  if (res.destroyed || res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** A handler for GET /metrics. */
export function metricsHandler(registry: Registry) {
  return (_req: IncomingMessage, res: ServerResponse): void => {
    registry
      .metrics()
      .then((text) => {
        res.setHeader('content-type', registry.contentType);
        res.end(text);
      })
      .catch(() => {
        res.statusCode = 500;
        res.end();
      });
  };
}
