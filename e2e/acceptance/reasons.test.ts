// DESIGN.md §3.2's acceptance: a waiting lease lists one reason per known worker, in the plugin's
// `list --requests` and in status.workers; an agent's own waiting entry keeps its one reason; and
// kubectl shows the summary and the events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { waitingWithReasons } from '../../test/cluster/plugin.js';
import {
  designCaseWaiting,
  fillThenAskLocally,
  iosSimulators,
  startAcceptanceFleet,
  type AcceptanceFleet,
} from './fleet.js';
import { reasonsByWorker } from '../../api/index.js';

const cluster = useCluster('why');
let fleet: AcceptanceFleet;
const oneIosSlot = { running: 4, platforms: { ios: { running: 1 } } };

beforeAll(async () => {
  fleet = await startAcceptanceFleet(cluster, [
    { name: 'worker-a', script: iosSimulators, limits: oneIosSlot },
    { name: 'worker-b', script: iosSimulators, limits: oneIosSlot },
  ]);
}, 150_000);

afterAll(async () => {
  await fleet?.stop();
});

describe('why a request waits (DESIGN.md §3.2)', () => {
  it('lists drained and full: running limit for iOS under the request, and the same in status.workers', async () => {
    // One worker at its iOS running limit (one lease on it), the other drained.
    const { other, waiting } = await designCaseWaiting(fleet);
    const request = await waitingWithReasons(fleet.fleet, 'req-3', 2);
    const expected = [
      {
        worker: fleet.worker('worker-a'),
        reason: other === 'worker-a' ? 'drained' : 'full',
        ...(other === 'worker-a' ? {} : { capacityReason: 'platform-running-limit' }),
      },
      {
        worker: fleet.worker('worker-b'),
        reason: other === 'worker-b' ? 'drained' : 'full',
        ...(other === 'worker-b' ? {} : { capacityReason: 'platform-running-limit' }),
      },
    ];
    expect(reasonsByWorker(request.status)).toEqual(expected);

    const listed = await fleet.kubectlSimlock(['list', '--requests']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    const head = lines.findIndex((line) => line.startsWith('Request req-3:'));
    expect(lines[head]).toMatch(
      /^Request req-3: ci, ios iPhone 16, queued at 1, waiting \d+s, (about \S+ \(.+\)|no estimate: .+)$/,
    );
    expect(lines.slice(head + 1, head + 3)).toEqual(
      ['worker-a', 'worker-b'].map((worker) =>
        worker === other ? `  ${worker}: drained` : `  ${worker}: full: running limit for iOS`,
      ),
    );

    const table = await cluster.kubectl(['get', 'leaserequests', '-n', fleet.fleet.namespace]);
    expect(table.stdout).toMatch(
      /req-3\s+Waiting\s+ios\s+iPhone 16\s+2 workers: 1 drained, 1 full/,
    );

    await fleet.kubectlSimlock(['worker', 'undrain', fleet.worker(other)]);
    const granted = await waiting;
    expect(granted.exitCode, granted.stderr).toBe(0);
    const described = await cluster.kubectl([
      'describe',
      'leaserequest',
      'req-3',
      '-n',
      fleet.fleet.namespace,
    ]);
    // On its own, or in the grant's Event when the grant came within a second (ADR 0005).
    expect(described.stdout).toMatch(
      /(Dispatched\s+.*Dispatched|Granted\s+.*dispatched) to \S+ \(/,
    );
    expect(described.stdout).toMatch(/Granted\s+.*Granted iPhone 16 /);
    await fleet.simlock(['release', 'req-3']);
    await fleet.simlock(['release', 'holder']);
  });

  it('shows busy with its own queue for a worker with a local request waiting, and the local entry with its reason', async () => {
    // Fill both iOS slots, then a program on worker-a's host asks worker-a itself for one more.
    const { local } = await fillThenAskLocally(fleet);
    await eventually(async () => {
      const worker = (await fleet.fleet.admin.get(
        `/apis/simlock.dev/v1alpha1/workers/${fleet.worker('worker-a')}`,
      )) as { status?: { queueDepth?: number } };
      return worker.status?.queueDepth === 1 ? true : undefined;
    });

    const waiting = fleet.leaseIos('--holder', 'ci', '--name', 'fleet-c', '--timeout', '120s');
    await waitingWithReasons(fleet.fleet, 'fleet-c', 2);
    const listed = await fleet.simlock(['list', '--requests']);
    const lines = listed.stdout.trimEnd().split('\n');
    const head = lines.findIndex((line) => line.startsWith('Request fleet-c:'));
    expect(lines[head + 1]).toBe('  worker-a: busy with its own queue');
    expect(lines[head + 2]).toBe('  worker-b: full: running limit for iOS');
    const localLine = lines.find((line) => line.includes('local-agent on worker-a'));
    expect(localLine).toMatch(
      /^Request local-\S+: local-agent on worker-a, ios iPhone 16, queued at 1, waiting \d+s — full: running limit for iOS$/,
    );
    expect(lines[lines.indexOf(localLine ?? '') + 1] ?? '').not.toMatch(/^ {2}/);

    // Free the slots: the local request (first in worker-a's own queue) and the fleet one are served.
    await fleet.simlock(['release', 'fill-1']);
    await fleet.simlock(['release', 'fill-2']);
    const localAnswer = await local;
    expect(localAnswer.status).toBe(200);
    const granted = await waiting;
    expect(granted.exitCode, granted.stderr).toBe(0);
    await fleet.simlock(['release', 'fleet-c']);
    const { lease } = (await localAnswer.json()) as { lease: string };
    await fleet.local('worker-a', 'DELETE', `/v1/local/leases/${lease}`);
  });
});
