// The agent's tunnel over TLS to a proxy whose certificate a private CA signed (tunnel.caFile): it
// connects when given that CA, presenting its bearer token, and refuses a proxy it cannot verify,
// saying why in the state the Worker status shows. The proxy here is a bare WebSocket server over
// HTTPS with the real certificates openssl makes; the proxy's own side is tested in
// proxy/tunnel-server.test.ts and end to end in e2e/tunnel.test.ts.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { WorkerTunnel } from '../../api/index.js';
import { silentLogger } from '../../runtime/index.js';
import { makeCa, makeLeaf, type CertificateAuthority } from '../../test/tls-certificates.js';
import { AgentTunnel } from './tunnel-client.js';

let dir: string;
let proxyCa: CertificateAuthority;
let strangerCa: CertificateAuthority;
let proxy: Server;
let proxyUrl: string;
const presented: (string | undefined)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'simlock-tunnel-ca-'));
  proxyCa = await makeCa(dir, 'proxy-ca');
  strangerCa = await makeCa(dir, 'stranger-ca');
  const leaf = await makeLeaf(dir, 'proxy', proxyCa, ['127.0.0.1']);
  proxy = createHttpsServer({
    cert: await readFile(leaf.certFile),
    key: await readFile(leaf.keyFile),
  });
  new WebSocketServer({ server: proxy }).on('connection', (_socket, request) => {
    presented.push(request.headers.authorization);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address();
  proxyUrl = `https://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

/** Starts a tunnel and resolves with the first state after `connecting`. */
async function firstState(caFile: string | undefined): Promise<WorkerTunnel> {
  let tunnel: AgentTunnel | undefined;
  const state = await new Promise<WorkerTunnel>((resolve) => {
    tunnel = new AgentTunnel({
      url: proxyUrl,
      ...(caFile !== undefined ? { caFile } : {}),
      worker: 'mac-mini-2',
      token: () => Promise.resolve('agent-token'),
      server: createHttpServer(),
      log: silentLogger,
      onState: (seen) => {
        if (seen.message !== 'connecting') resolve(seen);
      },
      backoff: { initialMs: 60_000, maxMs: 60_000 },
    });
    tunnel.start();
  });
  tunnel?.stop();
  return state;
}

describe("the tunnel to a proxy with a private CA's certificate", () => {
  it('connects with tunnel.caFile, presenting its bearer token', async () => {
    const state = await firstState(proxyCa.certFile);
    expect(state.connected).toBe(true);
    expect(presented.at(-1)).toBe('Bearer agent-token');
  });

  it('refuses a proxy it cannot verify, and says so in its status', async () => {
    const before = presented.length;
    const untrusted = await firstState(strangerCa.certFile);
    expect(untrusted).toMatchObject({ connected: false });
    expect(untrusted.message).toMatch(/certificate/);
    // Without the CA, the system's roots do not know the proxy's either.
    expect((await firstState(undefined)).message).toMatch(/certificate/);
    expect(presented.length).toBe(before);
  });

  it('says when tunnel.caFile cannot be read', async () => {
    const state = await firstState(join(dir, 'missing.crt'));
    expect(state.message).toMatch(/cannot read tunnel\.caFile/);
  });
});
