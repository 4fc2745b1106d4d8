// `why <request>` and `list --requests -o wide` as real processes against the real API server, the
// controller in-process, the test playing agents (issue 37, ADR 0026).
import { describe, expect, it } from 'vitest';
import { WhyAnswer } from '../api/index.js';
import { iosFullStatus, iosStatus } from '../test/cluster/fleet.js';
import { certificateIdentity } from '../test/cluster/identities.js';
import { bindRole, createRole } from '../test/cluster/role-bindings.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { pluginStories, runPlugin, waitingWithReasons } from '../test/cluster/plugin.js';

const cluster = useCluster('cli-why');
const { setup, simlock } = pluginStories(cluster);

describe('why', () => {
  it('names the drained worker that would serve it; undrained, the request is granted', async () => {
    const fleet = await setup();
    const a = await fleet.addWorker('a', { drained: true, status: iosStatus() });
    const b = await fleet.addWorker('b', { status: iosFullStatus() });
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16', holder: 'ci' });
    await waitingWithReasons(fleet, 'r1', 2);

    const text = await simlock(fleet, 'why', 'r1');
    expect(text.exitCode, text.stderr).toBe(0);
    // Cheapest first: an undrain is one command, a higher limit may need a bigger host.
    expect(text.stdout.trimEnd().split('\n')).toEqual([
      'Request r1: Waiting',
      `  undrain ${a}`,
      `  ${b} is at its iOS running limit (2 of 2); a higher limit would let it run`,
    ]);

    const json = await simlock(fleet, 'why', 'r1', '-o', 'json');
    expect(json.exitCode, json.stderr).toBe(0);
    const answer = WhyAnswer.parse(JSON.parse(json.stdout));
    expect(answer.verdict).toEqual({
      kind: 'changes',
      changes: [
        { kind: 'undrain', worker: a },
        {
          kind: 'raise-limit',
          worker: b,
          platform: 'ios',
          platformLimit: { running: 2, limit: 2 },
        },
      ],
    });

    const wide = await simlock(fleet, 'list', '--requests', '-o', 'wide');
    expect(wide.exitCode, wide.stderr).toBe(0);
    expect(wide.stdout).toContain(`\n  unblock: undrain ${a}\n`);

    const undrain = await simlock(fleet, 'worker', 'undrain', a);
    expect(undrain.exitCode, undrain.stderr).toBe(0);
    const lease = await fleet.grant('r1');
    expect(lease.spec.worker).toBe(a);
    await fleet.phase('r1', 'Granted');

    const after = await simlock(fleet, 'why', 'r1');
    expect(after.stdout).toContain('it is Granted, not waiting: there is nothing to unblock');
  });

  it('says so when nothing helps, and names a request that is not there', async () => {
    const fleet = await setup();
    // Full, and its own queue waits first: a higher limit alone would not let it run (its queue
    // takes the room), and nothing else would either.
    await fleet.addWorker('a', { status: iosFullStatus({ queueDepth: 1 }) });
    await fleet.createRequest('r2', { platform: 'ios', model: 'iPhone 16' });
    await waitingWithReasons(fleet, 'r2', 1);
    const result = await simlock(fleet, 'why', 'r2');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      'Request r2: Waiting',
      '  nothing helps: no single change (an undrain, a runtime, a lease ending, a higher limit) would let it run',
    ]);
    const missing = await simlock(fleet, 'why', 'nope');
    expect(missing.exitCode).toBe(6);
    expect(JSON.parse(missing.stderr)).toEqual({
      error: {
        code: 'NOT_FOUND',
        message: `request "nope" not found in namespace "${fleet.namespace}"`,
      },
    });
  });

  it('a person who may read the requests of their namespace and the Workers may ask (no Lease rule)', async () => {
    const fleet = await setup();
    const a = await fleet.addWorker('a', { drained: true, status: iosStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    await fleet.createRequest('r3', { platform: 'ios', model: 'iPhone 16' });
    await waitingWithReasons(fleet, 'r3', 2);
    const reader = await certificateIdentity(`${fleet.namespace}-reader`);
    const rbac = '/apis/rbac.authorization.k8s.io/v1';
    const subjects = [{ kind: 'User' as const, name: reader.username }];
    // Reads only: requests in its namespace (the leases held are read off them, ADR 0034), Workers
    // (cluster-scoped) by name of this file's namespace, so other files are untouched.
    await createRole(cluster.admin, {
      name: 'reader',
      namespace: fleet.namespace,
      rules: [{ apiGroups: ['simlock.dev'], resources: ['leaserequests'], verbs: ['get', 'list'] }],
    });
    await bindRole(cluster.admin, {
      name: 'reader',
      namespace: fleet.namespace,
      role: 'reader',
      roleKind: 'Role',
      subjects,
    });
    const workerReader = `${fleet.namespace}-worker-reader`;
    await createRole(cluster.admin, {
      name: workerReader,
      rules: [{ apiGroups: ['simlock.dev'], resources: ['workers'], verbs: ['list'] }],
    });
    await bindRole(cluster.admin, { name: workerReader, role: workerReader, subjects });
    try {
      const result = await eventually(
        async () => {
          const answer = await runPlugin(reader.kubeconfigPath, fleet.namespace, ['why', 'r3']);
          return answer.exitCode === 0 ? answer : undefined;
        },
        { what: 'why as the reader, once its bindings are seen' },
      );
      expect(result.stdout.split('\n')[1]).toBe(`  undrain ${a}`);
      // Requests in other namespaces it may not list: only its own leases count, and it says so.
      expect(result.stderr).toContain(
        `warning: cannot list leaserequests in every namespace; only leases in ${fleet.namespace} are counted`,
      );
    } finally {
      await cluster.admin.delete(`${rbac}/clusterrolebindings/${workerReader}`);
      await cluster.admin.delete(`${rbac}/clusterroles/${workerReader}`);
    }
  });
});
