// How the proxy dials an agent: over TLS it verifies the agent's certificate against its CA bundle
// and the endpoint's host, and sends nothing to an agent it does not trust; plain HTTP only with
// the explicit flag. The agents here are HTTPS and HTTP servers in the test; certificates are made
// with the real openssl.
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCa, makeLeaf, type CertificateAuthority } from '../test/tls-certificates.js';
import { AgentEndpointRefused, dialAgent, type AgentRequest } from './agent-tls.js';

let dir: string;
let agentsCa: CertificateAuthority;
let otherCa: CertificateAuthority;
const servers: Server[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'simlock-agent-tls-'));
  agentsCa = await makeCa(dir, 'agents-ca');
  otherCa = await makeCa(dir, 'other-ca');
}, 30_000);

afterAll(async () => {
  for (const server of servers) server.close();
  await rm(dir, { recursive: true, force: true });
});

/** An agent stand-in that counts the requests it receives and answers each "ran". */
async function agentServer(names: string[] | 'plain') {
  const received: string[] = [];
  const handler = (request: { url?: string }, response: { end(text: string): void }) => {
    received.push(request.url ?? '');
    response.end('ran');
  };
  let server: Server;
  if (names === 'plain') server = createHttpServer(handler);
  else {
    const leaf = await makeLeaf(dir, `agent-${servers.length}`, agentsCa, names);
    server = createHttpsServer(
      { cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) },
      handler,
    );
  }
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const scheme = names === 'plain' ? 'http' : 'https';
  return { server, received, url: new URL(`${scheme}://127.0.0.1:${port}/v1/exec`) };
}

const call = (): AgentRequest => ({
  method: 'POST',
  headers: { authorization: 'Bearer the-proxy-token', 'content-type': 'application/json' },
  body: '{}',
  signal: new AbortController().signal,
});

describe('the proxy dials an agent', () => {
  it('over TLS, when the agent’s certificate is signed by a CA of --agent-ca-file', async () => {
    const agent = await agentServer(['127.0.0.1']);
    const answer = await dialAgent(agent.url, call(), 'mac-mini-1', {
      caFile: agentsCa.certFile,
    });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('ran');
    expect(agent.received).toEqual(['/v1/exec']);
  });

  it('streams the answer as it comes, and a caller that hangs up closes it at the agent', async () => {
    const leaf = await makeLeaf(dir, 'agent-stream', agentsCa, ['127.0.0.1']);
    let closedAtAgent!: Promise<unknown>;
    const server = createHttpsServer(
      { cert: readFileSync(leaf.certFile), key: readFileSync(leaf.keyFile) },
      (_request, response) => {
        closedAtAgent = once(response, 'close');
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        // The first frame, then nothing until the caller goes (a tool that runs on).
        response.write('event: output\ndata: {}\n\n');
      },
    );
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const hangUp = new AbortController();
    const answer = await dialAgent(
      new URL(`https://127.0.0.1:${port}/v1/exec`),
      { ...call(), signal: hangUp.signal },
      'mac-mini-1',
      { caFile: agentsCa.certFile },
    );
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    const reader = answer.body?.getReader();
    const first = (await reader?.read())?.value as Uint8Array | undefined;
    expect(new TextDecoder().decode(first)).toBe('event: output\ndata: {}\n\n');
    hangUp.abort();
    await closedAtAgent;
    await expect(reader?.read()).rejects.toThrow();
  });

  it('sends nothing to an agent whose CA it does not trust', async () => {
    const agent = await agentServer(['127.0.0.1']);
    const brokenOff = once(agent.server, 'tlsClientError');
    const dialled = dialAgent(agent.url, call(), 'mac-mini-1', { caFile: otherCa.certFile });
    await expect(dialled).rejects.toBeInstanceOf(AgentEndpointRefused);
    await expect(dialled).rejects.toThrow(
      /^the agent of mac-mini-1 \(https:\/\/127\.0\.0\.1:\d+\) has a certificate this proxy does not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\)/,
    );
    // The agent saw the handshake broken off, and no request.
    await brokenOff;
    expect(agent.received).toEqual([]);
    // Nor does the system's trust store know it.
    await expect(dialAgent(agent.url, call(), 'mac-mini-1', {})).rejects.toBeInstanceOf(
      AgentEndpointRefused,
    );
    expect(agent.received).toEqual([]);
  });

  it('sends nothing to an agent whose certificate names another host', async () => {
    const agent = await agentServer(['mac-mini-2.lab.example']);
    const brokenOff = once(agent.server, 'tlsClientError');
    const dialled = dialAgent(agent.url, call(), 'mac-mini-1', { caFile: agentsCa.certFile });
    await expect(dialled).rejects.toThrow(
      /\(ERR_TLS_CERT_ALTNAME_INVALID\): its CA must be in --agent-ca-file and its names must include 127\.0\.0\.1$/,
    );
    await brokenOff;
    expect(agent.received).toEqual([]);
  });

  it('refuses a plain HTTP endpoint without --allow-plain-http-agents, and dials it with', async () => {
    const agent = await agentServer('plain');
    const dialled = dialAgent(agent.url, call(), 'mac-mini-1', { caFile: agentsCa.certFile });
    await expect(dialled).rejects.toBeInstanceOf(AgentEndpointRefused);
    await expect(dialled).rejects.toThrow(
      /^the agent of mac-mini-1 serves plain HTTP \(http:\/\/127\.0\.0\.1:\d+\), which this proxy does not dial: give the agent a certificate \(tls\.certFile\), or run the proxy with --allow-plain-http-agents for a local demo$/,
    );
    // Refused before any connection was opened (the check needs no network).
    expect(agent.received).toEqual([]);
    const answer = await dialAgent(agent.url, call(), 'mac-mini-1', { allowPlainHttp: true });
    expect(await answer.text()).toBe('ran');
    expect(agent.received).toEqual(['/v1/exec']);
  });
});
