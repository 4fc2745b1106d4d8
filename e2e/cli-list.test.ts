// `list`, `worker` and `device` as real processes against the real API server (some through the
// real kubectl, which finds the plugin on PATH), the controller in-process, the test playing agents.
import { describe, expect, it } from 'vitest';
import { LeaseRequestObject } from '../api/index.js';
import { leaseOfRequest, simlockPath } from '../runtime/index.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';
import { iosFullStatus, iosStatus, physicalIphone } from '../test/cluster/fleet.js';
import { certificateIdentity } from '../test/cluster/identities.js';
import { binDir, pluginStories, runPlugin, waitingWithReasons } from '../test/cluster/plugin.js';
import { bindRole, createRole } from '../test/cluster/role-bindings.js';

const cluster = useCluster('cli-list');
const { setup, simlock, kubectlSimlock } = pluginStories(cluster);

/** The lines from the one starting with `first` up to (not including) the next unindented one. */
function block(stdout: string, first: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.findIndex((line) => line.startsWith(first));
  if (start < 0) return [];
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => !line.startsWith('  '));
  return [lines[start] ?? '', ...rest.slice(0, end < 0 ? rest.length : end)];
}

describe('list --requests', () => {
  it('shows one line per worker for the acceptance case of DESIGN.md §3.2: drained, and full for iOS', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { label: 'wrk_a', drained: true, status: iosStatus() });
    await fleet.addWorker('b', { label: 'wrk_b', status: iosFullStatus() });
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16', holder: 'ci' });
    await waitingWithReasons(fleet, 'r1', 2);

    const result = await simlock(fleet, 'list', '--requests');
    expect(result.exitCode).toBe(0);
    const lines = block(result.stdout, 'Request r1:');
    // wrk_b reports itself full with no lease of ours on it: nothing to estimate from.
    expect(lines[0]).toMatch(
      /^Request r1: ci, ios iPhone 16, queued at 1, waiting \d+s, no estimate: no lease with a known end holds a device it could use, and too few iPhone 16 requests were granted in the last hour$/,
    );
    expect(lines.slice(1)).toEqual(['  wrk_a: drained', '  wrk_b: full: running limit for iOS']);

    // The same through the real kubectl.
    const viaKubectl = await kubectlSimlock('list', '--requests', '-n', fleet.namespace);
    expect(viaKubectl.exitCode).toBe(0);
    expect(block(viaKubectl.stdout, 'Request r1:').slice(1)).toEqual([
      '  wrk_a: drained',
      '  wrk_b: full: running limit for iOS',
    ]);
  });

  it('shows a request in an agent’s own queue as one line with its reason', async () => {
    const fleet = await setup({ controller: false });
    const queuedAt = new Date(Date.now() - 5000).toISOString();
    const entryId = `${fleet.namespace}-local-1`;
    await fleet.addWorker('b', {
      label: 'wrk_b',
      status: iosFullStatus({
        queueDepth: 1,
        queue: [
          {
            id: entryId,
            holder: 'local-agent',
            platform: 'ios',
            model: 'iPhone 16',
            queuedAt,
            reason: 'full',
            capacityReason: 'platform-running-limit',
          },
        ],
      }),
    });
    const result = await simlock(fleet, 'list', '--requests');
    expect(result.exitCode).toBe(0);
    expect(block(result.stdout, `Request ${entryId}:`)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^Request ${entryId}: local-agent on wrk_b, ios iPhone 16, queued at 1, waiting \\d+s — full: running limit for iOS$`,
        ),
      ),
    ]);
  });

  it('prints a List of LeaseRequests with -o json, across namespaces with -A', async () => {
    const fleet = await setup({ controller: false });
    await fleet.createRequest('j1', { platform: 'android' });
    const result = await simlock(fleet, 'list', '--requests', '-o', 'json');
    expect(result.exitCode).toBe(0);
    const list = JSON.parse(result.stdout) as {
      apiVersion: string;
      kind: string;
      items: { kind: string; metadata: { name: string } }[];
    };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.map((item) => [item.kind, item.metadata.name])).toEqual([
      ['LeaseRequest', 'j1'],
    ]);

    const all = await simlock(fleet, 'list', '--requests', '-A');
    expect(all.stdout).toMatch(
      new RegExp(`^Request ${fleet.namespace}/j1: android, waiting \\d+s$`, 'm'),
    );
  });

  it('says so on stderr when nothing waits', async () => {
    const fleet = await setup({ controller: false });
    const result = await simlock(fleet, 'list', '--requests', '-o', 'name');
    expect([result.exitCode, result.stdout]).toEqual([0, '']);
    const plain = await simlock(fleet, 'list', '--leases');
    expect(plain.stderr).toContain(`No leases found in ${fleet.namespace} namespace.`);
  });
});

describe('list --leases', () => {
  it('is a table of the leases held, kubectl-style, read off their requests', async () => {
    const fleet = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await fleet.createRequest('r1', { platform: 'ios', durationSeconds: 3600 });
    await fleet.grant('r1', 'sim-42');
    await fleet.phase('r1', 'Granted');

    const table = await simlock(fleet, 'list', '--leases');
    expect(table.exitCode).toBe(0);
    const [header, row, ...rest] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+WORKER\s+DEVICE\s+PHASE\s+EXPIRES\s+IDLE$/);
    // This test's worker writes no grant time and no exec ran: nothing to count idle time from.
    expect(row).toMatch(
      new RegExp(`^r1\\s+${a}\\s+iPhone 16\\s+Granted\\s+in (59|60)m\\s+<none>$`),
    );
    expect(rest).toEqual([]);

    const wide = await simlock(fleet, 'list', '--leases', '-o', 'wide', '--no-headers');
    expect(wide.stdout.trimEnd()).toMatch(
      /^r1\s+\S+\s+iPhone 16\s+Granted\s+in \d+m\s+<none>\s+sim-42\s+<none>\s+\d+s$/,
    );
    // What is listed are the requests that hold the leases (ADR 0034).
    const names = await simlock(fleet, 'list', '--leases', '-o', 'name');
    expect(names.stdout).toBe('leaserequest.simlock.dev/r1\n');

    // An exec runs (the proxy's record on the Lease, wherever the request says it is): busy, to
    // whoever may read the Lease.
    const request = LeaseRequestObject.parse(
      await fleet.admin.get(
        simlockPath('leaseRequest', { namespace: fleet.namespace, name: 'r1' }),
      ),
    );
    await fleet.admin.patch(
      simlockPath('lease', { ...leaseOfRequest(request), subresource: 'status' }),
      {
        status: {
          activity: {
            lastExecAt: new Date().toISOString(),
            runningUntil: new Date(Date.now() + 600_000).toISOString(),
          },
        },
      },
    );
    const busy = await simlock(fleet, 'list', '--leases', '--no-headers');
    expect(busy.stdout.trimEnd()).toMatch(/^r1\s+\S+\s+iPhone 16\s+Granted\s+in \d+m\s+busy$/);

    // A person who may read only requests (no Lease rule) sees the same lease; its idle time,
    // which only the Lease says, is unknown to them.
    const reader = await certificateIdentity(`${fleet.namespace}-reader`);
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
      subjects: [{ kind: 'User', name: reader.username }],
    });
    const asReader = await eventually(
      async () => {
        const answer = await runPlugin(reader.kubeconfigPath, fleet.namespace, [
          'list',
          '--leases',
        ]);
        return answer.exitCode === 0 ? answer : undefined;
      },
      { what: 'list --leases as the reader, once its binding is seen' },
    );
    expect(asReader.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^NAME\s+WORKER\s+DEVICE\s+PHASE\s+EXPIRES\s+IDLE$/),
      expect.stringMatching(
        new RegExp(`^r1\\s+${a}\\s+iPhone 16\\s+Granted\\s+in (59|60)m\\s+<none>$`),
      ),
    ]);
    expect(asReader.stderr).toBe('');
  });
});

describe('worker', () => {
  it('drain and undrain flip spec.drained', async () => {
    const fleet = await setup({ controller: false });
    const name = await fleet.addWorker('a', { status: iosStatus() });
    const drained = async () =>
      ((await fleet.admin.get(simlockPath('worker', { name }))) as { spec: { drained: boolean } })
        .spec.drained;

    const drain = await simlock(fleet, 'worker', 'drain', name);
    expect([drain.exitCode, drain.stdout]).toEqual([0, `worker.simlock.dev/${name} drained\n`]);
    expect(await drained()).toBe(true);
    const undrain = await simlock(fleet, 'worker', 'undrain', name);
    expect([undrain.exitCode, undrain.stdout]).toEqual([
      0,
      `worker.simlock.dev/${name} undrained\n`,
    ]);
    expect(await drained()).toBe(false);

    const missing = await simlock(fleet, 'worker', 'drain', `${fleet.namespace}-nope`);
    expect(missing.exitCode).toBe(6);
    expect(missing.stderr).toContain('"code":"NOT_FOUND"');
  });

  it('kubectl simlock worker list works through the real kubectl', async () => {
    const fleet = await setup({ controller: false });
    const a = await fleet.addWorker('a', {
      label: 'wrk_a',
      drained: true,
      status: iosStatus({ devices: [physicalIphone()] }),
    });
    const b = await fleet.addWorker('b', {
      label: 'wrk_b',
      status: iosFullStatus(),
      heartbeat: false,
    });
    const result = await kubectlSimlock(
      'worker',
      'list',
      '-l',
      fleet.selector,
      '--simlock-namespace',
      fleet.namespace,
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^NAME\s+LABEL\s+DRAINED\s+HEALTH\s+RUNNING\s+DEVICES\s+CONNECTED$/),
      expect.stringMatching(new RegExp(`^${a}\\s+wrk_a\\s+true\\s+running\\s+0/4\\s+1\\s+true$`)),
      expect.stringMatching(new RegExp(`^${b}\\s+wrk_b\\s+false\\s+running\\s+2/4\\s+0\\s+false$`)),
    ]);

    const json = await kubectlSimlock('worker', 'list', '-l', fleet.selector, '-o', 'json');
    const list = JSON.parse(json.stdout) as {
      kind: string;
      items: { metadata: { name: string } }[];
    };
    expect(list.kind).toBe('List');
    expect(list.items.map((item) => item.metadata.name)).toEqual([a, b]);
  });
});

describe('shell completion through the real kubectl', () => {
  it('completes the plugin’s commands and flag values (kubectl_complete-simlock)', async () => {
    const complete = (...words: string[]) =>
      runCommand(`${cluster.binDir}/kubectl`, ['__complete', 'simlock', ...words], {
        env: { ...process.env, PATH: `${binDir}:${process.env.PATH ?? ''}` },
      });
    const commands = await complete('worker', '');
    expect(commands.stdout.split('\n').slice(0, 3)).toEqual(['list', 'drain', 'undrain']);
    const values = await complete('lease', '--platform', '');
    expect(values.stdout.split('\n').slice(0, 2)).toEqual(['ios', 'android']);
  });
});

describe('device list', () => {
  it('lists the devices the agents report, by worker name or label', async () => {
    const fleet = await setup({ controller: false });
    // Labels are looked up across the cluster: this one is the fleet's own, as other files'
    // workers (with the same device) run beside it.
    const label = `${fleet.namespace}_b`;
    const b = await fleet.addWorker('b', {
      label,
      status: iosStatus({
        devices: [physicalIphone({ presence: { present: false, reason: 'locked' } })],
      }),
    });
    const result = await simlock(fleet, 'device', 'list', '--worker', label);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(
        /^WORKER\s+ID\s+NAME\s+MODEL\s+PLATFORM\s+OS\s+PHYSICAL\s+STATE\s+PRESENCE$/,
      ),
      expect.stringMatching(
        new RegExp(
          `^${b}\\s+00008110-001A2B3C4D5E\\s+Tester's iPhone\\s+iPhone 15 Pro\\s+ios\\s+18.4\\s+true\\s+ready\\s+locked$`,
        ),
      ),
    ]);
    const missing = await simlock(fleet, 'device', 'list', '--worker', `${fleet.namespace}-zz`);
    expect(missing.exitCode).toBe(6);
  });
});
