// The proxy asks the API server about a caller's token once per cache time, not once per exec (a
// client that execs again and again with one token), while whether it may exec is asked every time.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type KubeClient } from '../runtime/index.js';
import { createProxyApp } from './server.js';

const servers: { close: () => void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** An API server that accepts the token `good` as alice, allows everything, and has no Leases. */
function apiServer() {
  const asked: string[] = [];
  const client = {
    create: (path: string, body: { spec: { token?: string } }) => {
      const kind = path.split('/').at(-1) ?? '';
      asked.push(kind);
      if (kind === 'tokenreviews')
        return Promise.resolve({
          status:
            body.spec.token === 'good'
              ? { authenticated: true, user: { username: 'alice', groups: [] } }
              : { authenticated: false },
        });
      return Promise.resolve({ status: { allowed: true } });
    },
    get: () => Promise.resolve({ status: { phase: 'Pending' } }),
  } as unknown as KubeClient;
  return { client, asked };
}

async function start(client: KubeClient, tokenReviewCacheMs?: number) {
  const app = createProxyApp({
    client,
    log: silentLogger,
    agentToken: () => 'proxy',
    tokenReviewCacheMs,
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return (token: string) =>
    fetch(`http://127.0.0.1:${port}/v1/namespaces/ns/leases/l1/exec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'simctl', args: ['list'] }),
    }).then((answer) => answer.status);
}

const count = (asked: string[], kind: string) => asked.filter((entry) => entry === kind).length;

describe('the exec proxy and the API server', () => {
  it('reviews one token once for three execs, and asks may-exec each time', async () => {
    const { client, asked } = apiServer();
    const exec = await start(client);
    // The lease is not granted: 409 LEASE_NOT_ACTIVE, after both reviews.
    expect([await exec('good'), await exec('good'), await exec('good')]).toEqual([409, 409, 409]);
    expect(count(asked, 'tokenreviews')).toBe(1);
    expect(count(asked, 'subjectaccessreviews')).toBe(3);
  });

  it('reviews a refused token every time, and every token with the cache off', async () => {
    const { client, asked } = apiServer();
    const exec = await start(client);
    expect([await exec('bad'), await exec('bad')]).toEqual([401, 401]);
    expect(count(asked, 'tokenreviews')).toBe(2);
    const off = apiServer();
    const uncached = await start(off.client, 0);
    await uncached('good');
    await uncached('good');
    expect(count(off.asked, 'tokenreviews')).toBe(2);
  });
});
