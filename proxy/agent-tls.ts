// How the proxy dials an agent's exec endpoint (docs/adr/0025-agent-tls.md). https:// endpoints are
// dialled over TLS and the agent's certificate is verified: against the CA bundle of
// --agent-ca-file when given (read again on every dial, so a renewed bundle needs no restart; it
// replaces the system's roots), else against the system's roots, and always against the
// endpoint's host name (or IP address). A certificate that fails is a failed handshake: the
// request, with the proxy's token, is never sent. http:// endpoints are dialled only when the proxy
// runs with --allow-plain-http-agents (a local demo); otherwise the exec is refused UNAVAILABLE,
// naming the worker, before anything is sent.
import { readFile } from 'node:fs/promises';
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';

export interface AgentTlsOptions {
  /** A PEM bundle of the CAs that sign agents' certificates; none: the system's roots. */
  caFile?: string | undefined;
  /** Dial http:// endpoints too (a local demo: the proxy's token crosses the network in clear). */
  allowPlainHttp?: boolean | undefined;
}

/**
 * An endpoint the proxy will not dial (plain HTTP not allowed), or whose certificate it does not
 * trust: `message` is for the caller, naming the worker.
 */
export class AgentEndpointRefused extends Error {}

export interface AgentRequest {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
}

/**
 * POSTs to `url` (the agent's endpoint joined with its path) and resolves with the answer once its
 * headers came. Throws AgentEndpointRefused for an endpoint the options do not allow, and the
 * network's or TLS's error (an untrusted certificate among them) when the agent cannot be reached.
 */
export async function dialAgent(
  url: URL,
  init: AgentRequest,
  worker: string,
  options: AgentTlsOptions,
): Promise<Response> {
  if (url.protocol === 'http:') {
    if (!options.allowPlainHttp)
      throw new AgentEndpointRefused(
        `the agent of ${worker} serves plain HTTP (${url.origin}), which this proxy does not dial: give the agent a certificate (tls.certFile), or run the proxy with --allow-plain-http-agents for a local demo`,
      );
    return fetch(url, init);
  }
  if (url.protocol !== 'https:')
    throw new AgentEndpointRefused(`the endpoint of ${worker} is not http(s): ${url.protocol}`);
  const ca = options.caFile === undefined ? undefined : await readFile(options.caFile);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: init.method,
        headers: { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) },
        signal: init.signal,
        ...(ca ? { ca } : {}),
        // Node's defaults, said: the chain must verify and name the endpoint's host.
        rejectUnauthorized: true,
      },
      (incoming) => resolve(asResponse(incoming)),
    );
    outgoing.once('error', (error: NodeJS.ErrnoException) =>
      reject(untrusted(error) ? refusedCertificate(worker, url, error) : error),
    );
    outgoing.end(init.body);
  });
}

/** A failed verification of the agent's certificate (Node's codes: OpenSSL's, and its own). */
function untrusted(error: NodeJS.ErrnoException): boolean {
  const code = error.code ?? '';
  return code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /CERT|SIGNATURE|ISSUER/.test(code);
}

function refusedCertificate(
  worker: string,
  url: URL,
  error: NodeJS.ErrnoException,
): AgentEndpointRefused {
  return new AgentEndpointRefused(
    `the agent of ${worker} (${url.origin}) has a certificate this proxy does not trust (${error.code}): its CA must be in --agent-ca-file and its names must include ${url.hostname}`,
    { cause: error },
  );
}

/** The agent's answer as a fetch Response, its body read as the proxy reads it. */
function asResponse(incoming: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const status = incoming.statusCode ?? 502;
  const body =
    status === 204 || status === 304
      ? null
      : (Readable.toWeb(incoming) as unknown as ReadableStream<Uint8Array>);
  return new Response(body, { status, headers });
}
