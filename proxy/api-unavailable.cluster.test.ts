// An exec while the API server cannot answer: kube-apiserver shutting down answers 503 ("apiserver
// is shutting down"), as it did to the soak's execs at its restart. That is the cluster's trouble,
// not the proxy's: the caller is told UNAVAILABLE, which the client tries again, and not INTERNAL
// ("the proxy failed"), which it does not.
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient, silentLogger } from '../runtime/index.js';
import { useCluster } from '../test/cluster/harness.js';
import { createProxyApp } from './server.js';

const cluster = useCluster('proxy-api-unavailable');
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

/** The proxy on a client whose TokenReviews the API server answers with `error`. */
async function proxyWhoseReviewsFail(error: Error): Promise<string> {
  const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
  const create = client.create.bind(client);
  client.create = (path, ...rest) =>
    path.endsWith('/tokenreviews') ? Promise.reject(error) : create(path, ...rest);
  const app = createProxyApp({ client, log: silentLogger, agentToken: () => 'unused' });
  const server = await new Promise<Server>((resolve) => {
    const listening: Server = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  servers.push(server);
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

async function exec(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${url}/v1/namespaces/${cluster.namespace}/leases/l1/exec`, {
    method: 'POST',
    headers: { authorization: 'Bearer some-token', 'content-type': 'application/json' },
    body: JSON.stringify({ tool: 'simctl', args: ['list'] }),
  });
  return { status: response.status, body: await response.json() };
}

describe('an exec while the API server cannot answer', () => {
  it('is UNAVAILABLE when it answers 503, shutting down', async () => {
    const url = await proxyWhoseReviewsFail(
      new KubeApiError(503, 'ServiceUnavailable', 'apiserver is shutting down', {}),
    );
    const { status, body } = await exec(url);
    expect(status).toBe(503);
    expect(body).toMatchObject({
      error: {
        code: 'UNAVAILABLE',
        message: 'the API server could not answer now (503: apiserver is shutting down)',
      },
    });
  });

  it('is still INTERNAL when the API server refuses it for good (a 4xx the proxy did not expect)', async () => {
    const url = await proxyWhoseReviewsFail(
      new KubeApiError(422, 'Invalid', 'TokenReview.authentication.k8s.io is invalid', {}),
    );
    const { status, body } = await exec(url);
    expect(status).toBe(500);
    expect(body).toMatchObject({ error: { code: 'INTERNAL' } });
  });
});
