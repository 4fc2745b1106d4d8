// Several proxy replicas (ADR 0024): an agent's tunnel lands on one of them. The agent writes which
// in its Worker's `status.tunnel.proxy` (the URL that replica said in the upgrade answer); a replica
// asked for an exec on a worker whose tunnel another replica holds passes the caller's call,
// unchanged, to that replica, and streams its answer back. A forwarded call is marked, so it is
// never forwarded again (the holder answers it, or says UNAVAILABLE).
import type { Request, Response } from 'express';
import { sendError, writeWithBackpressure, type Logger } from '../runtime/index.js';
import type { ExecOutcome } from './metrics.js';

/** The header a replica's upgrade answer names itself in, and the mark of a forwarded call. */
export { TUNNEL_PROXY_HEADER as PROXY_HEADER } from '../api/index.js';
export const FORWARDED_HEADER = 'x-simlock-forwarded';

/** Where to forward this call, if anywhere: another replica that holds the worker's tunnel. */
export function forwardTarget(
  self: string | undefined,
  holder: { connected: boolean; proxy?: string | undefined } | undefined,
  req: Request,
): string | undefined {
  if (!self || !holder?.connected || !holder.proxy || holder.proxy === self) return undefined;
  if (req.headers[FORWARDED_HEADER] !== undefined) return undefined;
  return holder.proxy;
}

/** Passes the caller's exec call to the replica `target` and streams its answer back. */
export async function forwardExec(
  target: string,
  req: Request,
  res: Response,
  log: Logger,
): Promise<ExecOutcome> {
  const upstream = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) upstream.abort();
  });
  let answer: globalThis.Response;
  try {
    answer = await fetch(new URL(req.originalUrl, target), {
      method: 'POST',
      headers: {
        authorization: req.headers.authorization ?? '',
        'content-type': 'application/json',
        accept: 'text/event-stream',
        [FORWARDED_HEADER]: '1',
      },
      body: JSON.stringify(req.body),
      signal: upstream.signal,
    });
  } catch (error) {
    log.warn('the replica holding the tunnel is unreachable', { target, error });
    sendError(res, 'UNAVAILABLE', 'the proxy replica that holds the agent’s tunnel is unreachable');
    return upstream.signal.aborted ? 'client-gone' : 'unavailable';
  }
  res.status(answer.status);
  res.setHeader('content-type', answer.headers.get('content-type') ?? 'application/json');
  if (answer.headers.get('content-type')?.startsWith('text/event-stream'))
    res.setHeader('cache-control', 'no-cache');
  res.flushHeaders();
  try {
    if (answer.body)
      for await (const chunk of answer.body) {
        if (res.destroyed) break;
        await writeWithBackpressure(res, Buffer.from(chunk as Uint8Array));
      }
  } catch {
    return upstream.signal.aborted ? 'client-gone' : 'forwarded-cut';
  } finally {
    res.end();
  }
  return 'forwarded';
}
