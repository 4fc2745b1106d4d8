// What the real API server answers when something is not there, and how the client reads it: an
// object that is not there is "not found"; a resource the server does not serve (as its
// custom-resource handler answers for a moment after an etcd restart, before it has caught up
// with the CRDs) is not, since that says nothing about the object.
import { describe, expect, it } from 'vitest';
import { useCluster } from '../test/cluster/harness.js';
import { KubeApiError, isNotFound } from './kube-errors.js';
import { simlockPath } from './paths.js';

const cluster = useCluster('errors');

async function failureOf(request: Promise<unknown>): Promise<KubeApiError> {
  const error: unknown = await request.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  if (!(error instanceof KubeApiError))
    throw new Error(`expected an API error, got ${String(error)}`);
  return error;
}

/** What a get, a patch and a delete of `path` fail with, one after the other. */
async function failuresAt(path: string): Promise<KubeApiError[]> {
  return [
    await failureOf(cluster.admin.get(path)),
    await failureOf(cluster.admin.patch(path, { metadata: { labels: { a: 'b' } } })),
    await failureOf(cluster.admin.delete(path)),
  ];
}

describe('not found', () => {
  it('is an object that is not there: a get, a patch and a delete of it', async () => {
    const path = simlockPath('lease', { namespace: cluster.namespace, name: 'never-made' });
    for (const error of await failuresAt(path)) {
      expect(error.status).toBe(404);
      expect(isNotFound(error)).toBe(true);
    }
  });

  it('is not a resource the server does not serve, though the status is 404', async () => {
    const path = `/apis/simlock.dev/v1alpha1/namespaces/${cluster.namespace}/nosuchthings/x`;
    for (const error of await failuresAt(path)) {
      expect(error.status).toBe(404);
      expect(isNotFound(error)).toBe(false);
    }
  });
});
