// The controller's status writes are conditional (a PUT onto the version it last wrote, ADR 0014):
// against the real API server, a request changed by someone else between two of them makes the
// next one a 409, and the controller reads the request again and writes onto that version.
import { expect, it } from 'vitest';
import { KubeClient, simlockPath } from '../runtime/index.js';
import { controllerFor } from '../test/cluster/controller.js';
import { TestFleet, iosFullStatus, iosStatus } from '../test/cluster/fleet.js';
import { useCluster } from '../test/cluster/harness.js';
import { reasonsByWorker } from '../api/index.js';

const cluster = useCluster('sconf');

it('writes a status onto the version a change of someone else made, after a 409', async () => {
  const fleet = await TestFleet.create(cluster);
  const client = KubeClient.fromOptions({ kubeconfig: cluster.kubeconfigPath });
  const sent: string[] = [];
  client.observe((method, path, status) => sent.push(`${method} ${path} ${status}`));
  const reconciler = controllerFor(cluster, fleet, { client });
  const requestPath = simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' });
  try {
    await fleet.addWorker('a', { status: iosFullStatus() });
    await reconciler.start();
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.requestWhere(
      'r1',
      (request) =>
        request.status?.phase === 'Waiting' && reasonsByWorker(request.status).length === 1,
    );
    // Its user labels the request: a new resourceVersion the controller has not written onto.
    await cluster.admin.patch(requestPath, { metadata: { labels: { team: 'qa' } } });
    await fleet.setStatus('a', iosStatus());
    await fleet.grant('r1', 'sim-7');
    const granted = await fleet.phase('r1', 'Granted');
    expect(granted.status?.device?.id).toBe('sim-7');
    const request = (await cluster.admin.get(requestPath)) as {
      metadata: { labels?: Record<string, string> };
    };
    expect(request.metadata.labels?.team).toBe('qa');
    const statusWrites = sent.filter((line) => line.startsWith(`PUT ${requestPath}/status `));
    expect(statusWrites).toContain(`PUT ${requestPath}/status 409`);
    expect(statusWrites.at(-1)).toBe(`PUT ${requestPath}/status 200`);
    expect(sent).toContain(`GET ${requestPath} 200`);
    // No status write of the controller's went as a merge patch.
    expect(sent.filter((line) => line.startsWith(`PATCH ${requestPath}/status`))).toEqual([]);
  } finally {
    await reconciler.stop();
    await fleet.cleanup();
  }
});
