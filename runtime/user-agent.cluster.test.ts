// Who wrote what, as the API server records it: a client that says who it is (User-Agent) is the
// field manager of its writes, the name `kubectl get --show-managed-fields` shows; one that says
// nothing is "unknown".
import { describe, expect, it } from 'vitest';
import type { ManagedBy } from '../test/cluster/fleet.js';
import { useCluster } from '../test/cluster/harness.js';
import { aLeaseRequest, grantedRequestStatus } from '../test/fixtures/objects.js';
import { KubeClient } from './kube-client.js';
import { simlockPath } from './paths.js';
import { statusReplacement } from './status-update.js';
import { userAgent } from './user-agent.js';

const cluster = useCluster('ua');

function managersOf(object: unknown): ManagedBy[] {
  const entries = (object as { metadata: { managedFields?: ManagedBy[] } }).metadata.managedFields;
  return (entries ?? []).map(({ manager, subresource }) => ({ manager, subresource }));
}

describe('a client that says who it is', () => {
  it('is named as the field manager of what it writes, status included', async () => {
    const client = KubeClient.fromOptions({
      kubeconfig: cluster.kubeconfigPath,
      userAgent: userAgent('simlock-test-writer'),
    });
    const requests = simlockPath('leaseRequest', { namespace: cluster.namespace });
    const created = (await client.create(requests, aLeaseRequest('named').obj())) as {
      metadata: { resourceVersion: string };
    };
    await client.replace(
      simlockPath('leaseRequest', {
        namespace: cluster.namespace,
        name: 'named',
        subresource: 'status',
      }),
      statusReplacement(
        {
          resource: 'leaseRequest',
          namespace: cluster.namespace,
          name: 'named',
          resourceVersion: created.metadata.resourceVersion,
        },
        grantedRequestStatus({ worker: 'mac-1' }),
      ),
    );
    const stored = await cluster.admin.get(
      simlockPath('leaseRequest', { namespace: cluster.namespace, name: 'named' }),
    );
    expect(managersOf(stored)).toEqual([
      { manager: 'simlock-test-writer', subresource: undefined },
      { manager: 'simlock-test-writer', subresource: 'status' },
    ]);
  });

  it('without a name is "unknown" to the API server', async () => {
    const requests = simlockPath('leaseRequest', { namespace: cluster.namespace });
    const created = await cluster.admin.create(requests, aLeaseRequest('unnamed').obj());
    expect(managersOf(created)).toEqual([{ manager: 'unknown', subresource: undefined }]);
  });
});
