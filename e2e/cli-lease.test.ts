// `lease` and `release` as real processes against the real API server, with the controller
// running in-process and the test playing the agents (TestFleet).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isNotFound, simlockPath } from '../runtime/index.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';
import { iosFullStatus, iosStatus, physicalIphone } from '../test/cluster/fleet.js';
import { pluginError as errorOf, pluginPath, pluginStories } from '../test/cluster/plugin.js';
import { grantedIphone } from '../test/fixtures/objects.js';

const cluster = useCluster('cli-lease');
const { setup, simlock, spawn, kubectlSimlock } = pluginStories(cluster);
/** What a person types to lease any iPhone 16 (the flags after it vary). */
const LEASE_IPHONE_16 = ['lease', '--platform', 'ios', '--device', 'iPhone 16'];

describe('lease', () => {
  it('is granted: prints the grant line and exits 0', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    const result = simlock(fleet, ...LEASE_IPHONE_16, '--name', 'r1', '--holder', 'ci');
    const lease = await fleet.grant('r1', 'sim-42');
    expect(lease.spec.device).toMatchObject({ platform: 'ios', model: 'iPhone 16' });
    const { exitCode, stdout, stderr } = await result;
    expect(stderr).not.toContain('"error"');
    expect(exitCode).toBe(0);
    expect(stdout).toBe('Lease r1: iPhone 16 sim-42 on wrk_a\n');
    const created = await fleet.request('r1');
    expect(created.status?.phase).toBe('Granted');
  });

  it('says (physical) for a physical device', async () => {
    const fleet = await setup();
    await fleet.addWorker('b', {
      label: 'wrk_b',
      status: iosFullStatus({ devices: [physicalIphone()] }),
    });
    const result = simlock(fleet, 'lease', '--platform', 'ios', '--physical', '--name', 'p1');
    await fleet.answer('p1', {
      phase: 'Granted',
      device: grantedIphone({
        id: '00008110-001A2B3C4D5E',
        name: 'iPhone 15 Pro',
        model: 'iPhone 15 Pro',
        physical: true,
      }),
    });
    const { exitCode, stdout } = await result;
    expect(exitCode).toBe(0);
    expect(stdout).toBe('Lease p1: iPhone 15 Pro 00008110-001A2B3C4D5E (physical) on wrk_b\n');
  });

  it('prints the granted LeaseRequest with -o json, and sends the spec the flags say', async () => {
    const fleet = await setup();
    const capabilities = [
      { name: 'a', available: true },
      { name: 'b', available: true },
    ];
    await fleet.addWorker('a', { status: iosStatus({ capabilities }) });
    const result = simlock(
      fleet,
      'lease',
      '--platform=ios',
      '--os',
      '>=18 <19',
      '--duration',
      '5m',
      '--timeout',
      '90s',
      '--requires',
      'a,b',
      '--name',
      'j1',
      '-o',
      'json',
    );
    await fleet.grant('j1', 'sim-7');
    const { exitCode, stdout } = await result;
    expect(exitCode).toBe(0);
    const printed = JSON.parse(stdout) as {
      kind: string;
      apiVersion: string;
      metadata: { name: string };
      spec: Record<string, unknown>;
      status: { phase: string; device: { id: string } };
    };
    expect(printed).toMatchObject({
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'LeaseRequest',
      metadata: { name: 'j1' },
      status: { phase: 'Granted', device: { id: 'sim-7' } },
    });
    expect(printed.spec).toEqual({
      platform: 'ios',
      os: '>=18 <19',
      requires: ['a', 'b'],
      waitTimeoutSeconds: 90,
      durationSeconds: 300,
    });
  });

  it('prints a line for each stage of making and booting the device on stderr; -o json keeps stdout to the request', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    const result = simlock(fleet, ...LEASE_IPHONE_16, '--name', 'made', '-o', 'json');
    // Played as an agent that has to make the device: each stage waits until the request shows
    // it, so the plugin's watch sees each one.
    const since = new Date().toISOString();
    for (const [stage, estimatedSeconds] of [
      ['provisioning', 40],
      ['booting', 25],
    ] as const) {
      await fleet.answer('made', {
        phase: 'Pending',
        progress: { stage, since, estimatedSeconds },
      });
      await fleet.requestWhere('made', (r) => r.status?.progress?.stage === stage);
    }
    await fleet.answer('made', {
      phase: 'Granted',
      progress: null,
      device: grantedIphone({ id: 'sim-new' }),
    });
    const { exitCode, stdout, stderr } = await result;
    expect(exitCode).toBe(0);
    expect((JSON.parse(stdout) as { status: { phase: string } }).status.phase).toBe('Granted');
    const stages = stderr
      .split('\n')
      .filter((line) => /^Request made: (provisioning|booting) /.test(line))
      .map((line) => line.replace(/, waiting \d+s$/, ''));
    expect(stages).toEqual([
      'Request made: provisioning iPhone 16 on wrk_a (about 40 s)',
      'Request made: booting iPhone 16 on wrk_a (about 25 s)',
    ]);
  });

  it('fails UNKNOWN_MODEL with exit 12 and the error JSON on stderr', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    const result = await simlock(fleet, 'lease', '--platform', 'ios', '--device', 'iPhone 3G');
    expect(result.exitCode).toBe(12);
    expect(result.stdout).toBe('');
    expect(errorOf(result)).toMatchObject({ code: 'UNKNOWN_MODEL' });
  });

  it('fails NO_CAPACITY with exit 11 under --no-wait when every worker is full', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { status: iosFullStatus() });
    await fleet.addWorker('b', { status: iosFullStatus() });
    const result = await simlock(fleet, 'lease', '--platform', 'ios', '--no-wait');
    expect(result.exitCode).toBe(11);
    expect(errorOf(result)).toMatchObject({ code: 'NO_CAPACITY' });
  });

  it('refused by the API server at create is INVALID_REQUEST (exit 3) with its message', async () => {
    const fleet = await setup();
    await fleet.createRequest('taken', { platform: 'ios' });
    const result = await simlock(fleet, 'lease', '--platform', 'ios', '--name', 'taken');
    expect(result.exitCode).toBe(3);
    expect(errorOf(result)?.code).toBe('INVALID_REQUEST');
    expect(errorOf(result)?.message).toContain('already exists');
  });

  it('withdraws the request on Ctrl-C and exits 130', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { label: 'wrk_a', status: iosFullStatus() });
    const child = spawn(fleet, 'lease', '--platform', 'ios', '--name', 'c1');
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code) => resolve(code)),
    );
    // Waiting, and saying why: the plain (non-terminal) display prints the block on a change.
    await eventually(
      () => (stderr.includes('  wrk_a: full: running limit for iOS') ? true : undefined),
      {
        what: 'the waiting display',
      },
    );
    expect(stderr).toMatch(
      /Request c1: queued at 1, waiting \d+s, [^\n]+\n {2}wrk_a: full: running limit for iOS\n/,
    );
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).toContain('Request c1 withdrawn');
    await fleet.requestGone('c1');
  });

  it('through the real kubectl: a generated name, granted', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { label: 'wrk_a', status: iosStatus() });
    const result = kubectlSimlock('lease', '--platform', 'ios', '-n', fleet.namespace);
    // The request's generated name is the lease's, as its holder knows it (its Lease, in the
    // worker's namespace, is named by the request's UID: ADR 0034).
    const name = await eventually(async () => {
      const list = (await fleet.admin.get(
        simlockPath('leaseRequest', { namespace: fleet.namespace }),
      )) as { items: { metadata: { name: string } }[] };
      return list.items[0]?.metadata.name;
    });
    expect(name).toMatch(/^lease-[a-z0-9]{5}$/);
    await fleet.grant(name, 'sim-9');
    const { exitCode, stdout } = await result;
    expect(exitCode).toBe(0);
    expect(stdout).toBe(`Lease ${name}: iPhone 16 sim-9 on wrk_a\n`);
  });

  it('cannot reach a cluster that is not there: UNAVAILABLE, exit 10', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-cli-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
        'users: [{name: nobody, user: {token: none}}]',
        'contexts: [{name: nowhere, context: {cluster: nowhere, user: nobody}}]',
        'current-context: nowhere',
      ].join('\n'),
    );
    const result = await runCommand(pluginPath, [
      'lease',
      '--platform',
      'ios',
      '--kubeconfig',
      kubeconfig,
    ]);
    expect(result.exitCode).toBe(10);
    expect(errorOf(result)?.code).toBe('UNAVAILABLE');
  });
});

describe('release', () => {
  it('deletes the request, waits until it is gone, and says so', async () => {
    const fleet = await setup();
    await fleet.addWorker('a', { status: iosStatus() });
    await fleet.createRequest('r1', { platform: 'ios' });
    await fleet.grant('r1');
    await fleet.phase('r1', 'Granted');
    const result = await simlock(fleet, 'release', 'r1');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('Lease r1 released\n');
    // Gone when the command returns: the controller released the Lease, then the request.
    await expect(fleet.request('r1')).rejects.toSatisfy(isNotFound);
    expect(await fleet.lease('r1')).toBeUndefined();
  });

  it('says whose reclaim it waits for when the release takes longer than --timeout', async () => {
    const fleet = await setup();
    const a = await fleet.addWorker('a', { status: iosStatus() });
    await fleet.createRequest('r1', { platform: 'ios' });
    // A worker that granted and then went down: nothing reclaims the device for now.
    await fleet.grant('r1', 'sim-1', { reclaims: false });
    await fleet.phase('r1', 'Granted');
    const result = await simlock(fleet, 'release', 'r1', '--timeout', '2s');
    expect(result.exitCode).toBe(16);
    const error = errorOf(result);
    expect(error?.code).toBe('TIMEOUT');
    expect(error?.message).toContain(`once the agent of worker ${a} has reclaimed the device`);
    expect(error?.message).toContain(`kubectl delete worker ${a}`);
    // Doing as it says lets the release finish.
    await fleet.removeWorker('a');
    await fleet.requestGone('r1');
  });

  it('is NOT_FOUND (exit 6) for a lease that does not exist', async () => {
    const fleet = await setup();
    const result = await simlock(fleet, 'release', 'nothing-here');
    expect(result.exitCode).toBe(6);
    expect(errorOf(result)).toMatchObject({ code: 'NOT_FOUND' });
  });
});
