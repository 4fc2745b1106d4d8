// How the proxy reaches an agent for one exec: through the agent's tunnel when this proxy holds it
// (plain HTTP over one stream of it, ADR 0024), else at the endpoint its Worker says (over TLS,
// agent-tls.ts, ADR 0025). Either way the
// answer is a fetch Response, so the exec handler streams it the same. A tunnel cut while the tool
// runs ends the stream with an UNAVAILABLE error event (the tool's end is unknown).
import { request, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { sseFrame } from '../api/index.js';
import type { TunnelMux } from '../runtime/index.js';
import { dialAgent, type AgentTlsOptions } from './agent-tls.js';

export interface AgentCall {
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}

/** Has the agent of this worker a route at all (a tunnel here, or an endpoint)? */
export function agentReachable(tunnel: TunnelMux | undefined, endpoint: string | undefined) {
  return tunnel !== undefined || endpoint !== undefined;
}

export function reachAgent(
  worker: string,
  tunnel: TunnelMux | undefined,
  endpoint: string | undefined,
  call: AgentCall,
  tls: AgentTlsOptions,
): Promise<Response> {
  if (tunnel) return throughTunnel(worker, tunnel, call);
  if (!endpoint) return Promise.reject(new Error(`worker ${worker} has no route`));
  return dialAgent(new URL('/v1/exec', endpoint), { method: 'POST', ...call }, worker, tls);
}

function throughTunnel(worker: string, tunnel: TunnelMux, call: AgentCall): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        path: '/v1/exec',
        host: worker,
        headers: { ...call.headers, 'content-length': Buffer.byteLength(call.body) },
        createConnection: () => tunnel.open(),
        signal: call.signal,
      },
      (incoming) => {
        const body =
          incoming.statusCode === 200
            ? Readable.toWeb(Readable.from(saidWhenCut(worker, incoming, call.signal)))
            : Readable.toWeb(incoming);
        resolve(
          new Response(body as ReadableStream<Uint8Array>, {
            status: incoming.statusCode ?? 502,
            headers: { 'content-type': incoming.headers['content-type'] ?? 'text/plain' },
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(call.body);
  });
}

/** The agent's events, then an UNAVAILABLE error event if the tunnel goes before the stream ends. */
async function* saidWhenCut(
  worker: string,
  incoming: IncomingMessage,
  signal: AbortSignal,
): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of incoming) yield chunk as Buffer;
  } catch (error) {
    if (signal.aborted) throw error;
    yield Buffer.from(
      sseFrame('error', {
        code: 'UNAVAILABLE',
        message: `the tunnel to the agent of ${worker} was cut while the tool ran; whether it finished is unknown`,
      }),
    );
  }
}
