// A lease's lifetime (issue 16, ADR 0008) with real processes: a real agent with the fake driver,
// the controller in-process, the real proxy recording exec activity, the plugin as a process.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execThroughProxy, isNotFound } from '../runtime/index.js';
import type { AgentProcess } from '../test/cluster/agents.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import type { TestFleet } from '../test/cluster/fleet.js';
import { kubectlEventsOf } from '../test/cluster/kubectl-events.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';
import { pluginPath as plugin, runPlugin, spawnPlugin } from '../test/cluster/plugin.js';

const cluster = useCluster('lifetime');
let env: ExecFleet | undefined;
let fleet: TestFleet;
let agent: AgentProcess;
let proxyUrl: string;
let token: string;

const simlock = (...args: string[]) => runPlugin(cluster.kubeconfigPath, fleet.namespace, args);

beforeAll(async () => {
  env = await startExecFleet(cluster, {
    // simctl runs 10 s: an exec that lasts longer than the idle timeout.
    tools: { simctl: { delayMs: 10_000, stdout: 'done\n' } },
    controller: { expiringSoonMs: 10_000 },
    recordActivity: true,
  });
  ({ fleet, agent, proxyUrl, token } = env);
}, 60_000);

afterAll(() => env?.stop());

const released = (name: string) =>
  fleet.requestWhere(name, (r) => r.status?.phase === 'Released' || r.status === undefined, 20_000);

async function gone(name: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  await eventually(
    async () => {
      try {
        const request = await fleet.request(name);
        return request.status?.phase === 'Released' ? true : undefined;
      } catch {
        return true;
      }
    },
    { timeoutMs, intervalMs: 50, what: `request ${name} released` },
  );
  return Date.now() - started;
}

describe('extend', () => {
  it('moves expiresAt, and the agent keeps the device past the old expiry', async () => {
    // Long enough that a plugin slow to start under load still finds it granted.
    await fleet.createRequest('ext', { platform: 'ios', durationSeconds: 15 });
    await fleet.phase('ext', 'Granted', 20_000);
    const before = Date.parse((await fleet.lease('ext'))?.spec.expiresAt ?? '');
    const extended = await simlock('extend', 'ext', '--by', '60s');
    expect(extended.stderr).toBe('');
    expect(extended.stdout).toMatch(/^Lease ext extended to \S+Z\n$/);
    const after = Date.parse((await fleet.lease('ext'))?.spec.expiresAt ?? '');
    expect(after - before).toBe(60_000);
    // Granted later for as long, so it expires after ext's old expiry: once it is released, the
    // controller's and the agent's expiry timers of that moment have run.
    await fleet.createRequest('witness', { platform: 'ios', durationSeconds: 15 });
    await fleet.phase('witness', 'Granted', 20_000);
    expect(Date.parse((await fleet.lease('witness'))?.spec.expiresAt ?? '')).toBeGreaterThan(
      before,
    );
    // Past the old expiry (the witness let go at its own, later one): still granted, the Lease
    // still Granted by the agent.
    await released('witness');
    expect((await fleet.request('ext')).status?.phase).toBe('Granted');
    expect((await fleet.lease('ext'))?.status?.phase).toBe('Granted');
    const events = await kubectlEventsOf(cluster, fleet.namespace, 'ext');
    expect(events.stdout).toMatch(/Extended\s+leaserequest\/ext\s+Extended to/);
    // A decrease is refused by the API server, naming the field.
    const shorter = await cluster.kubectl([
      'patch',
      'lr',
      'ext',
      '-n',
      fleet.namespace,
      '--type=merge',
      '-p',
      '{"spec":{"durationSeconds":5}}',
    ]);
    expect(shorter.stderr).toMatch(/spec\.durationSeconds: Invalid value.*may only grow/);
    await simlock('release', 'ext');
  });

  it('marks a lease expiring soon, then releases it at its expiry', async () => {
    // Two minutes left, but the controller warns 10 s before: not expiring soon.
    await fleet.createRequest('later', { platform: 'ios', durationSeconds: 120 });
    await fleet.createRequest('soon', { platform: 'ios', durationSeconds: 12 });
    await fleet.phase('later', 'Granted', 20_000);
    await fleet.phase('soon', 'Granted', 20_000);
    const warned = await fleet.requestWhere(
      'soon',
      (r) =>
        (
          r.status as { conditions?: { type: string; status: string }[] } | undefined
        )?.conditions?.some((c) => c.type === 'ExpiringSoon' && c.status === 'True') === true,
    );
    expect(warned.status?.phase).toBe('Granted');
    const listed = await simlock('list', '--leases');
    expect(listed.stdout).toMatch(/soon.*expiring soon/);
    const later = listed.stdout.split('\n').find((line) => line.startsWith('later '));
    expect(later).toMatch(/Granted +in \d+s +\d+s$/);
    await released('soon');
    await simlock('release', 'later');
  });
});

describe('idle reclaim', () => {
  it('releases a lease with no exec after its idle timeout (Idle); a running exec keeps one', async () => {
    await fleet.createRequest('idle', {
      platform: 'ios',
      durationSeconds: 600,
      idleTimeoutSeconds: 5,
    });
    await fleet.createRequest('busy', {
      platform: 'ios',
      durationSeconds: 600,
      idleTimeoutSeconds: 5,
    });
    await fleet.phase('idle', 'Granted', 20_000);
    const idleLease = (await fleet.lease('idle'))?.status as { grantedAt?: string } | undefined;
    const idleGrantedAt = Date.parse(idleLease?.grantedAt ?? '');
    expect(Number.isFinite(idleGrantedAt)).toBe(true);
    await fleet.phase('busy', 'Granted', 20_000);
    const grantedAt = Date.now();
    const exec = execThroughProxy({
      url: proxyUrl,
      token,
      namespace: fleet.namespace,
      lease: 'busy',
      tool: 'simctl',
      args: ['listapps'],
      onOutput: () => undefined,
    });
    const idle = await fleet.requestWhere('idle', (r) => r.status?.phase === 'Released', 15_000);
    // Released once idle for its 5 s (the agent's grant time, on this machine's one clock).
    expect(Date.now() - idleGrantedAt).toBeGreaterThanOrEqual(4500);
    expect(JSON.stringify(idle.status)).toMatch(/"reason":"Idle"/);
    // The 10 s exec runs past the idle timeout: its lease is still held when it ends.
    const { exitCode } = await exec;
    expect(exitCode).toBe(0);
    expect(Date.now() - grantedAt).toBeGreaterThan(9000);
    expect((await fleet.request('busy')).status?.phase).toBe('Granted');
    // Its Lease, where the request says it is (the worker's namespace, under the request's UID).
    const lease = await fleet.lease('busy');
    const shown = await cluster.kubectl([
      ...['get', 'dl', lease?.metadata.name ?? 'busy'],
      ...['-n', lease?.metadata.namespace ?? fleet.namespace],
    ]);
    expect(shown.stdout.split('\n')[0]).toMatch(/IDLE/);
    expect(shown.stdout).toMatch(/\n\S+\s+\S+\s+.*Granted\s+\S+\s+\d+s/);
    // As its holder lists it, by the request's name (busy until the proxy has written the end).
    const listed = await simlock('list', '--leases', '--no-headers');
    expect(listed.stdout).toMatch(/^busy\s+\S+\s+iPhone 16.*\s+Granted\s+in \S+\s+(\d+s|busy)$/m);
    await simlock('release', 'busy');
  }, 40_000);
});

describe('lease --hold', () => {
  function hold(name: string): Promise<ChildProcess> {
    const child = spawnPlugin(cluster.kubeconfigPath, fleet.namespace, [
      ...['lease', '--platform', 'ios', '--name', name, '--hold', '--renew-every', '2s'],
    ]);
    return new Promise((resolve, reject) => {
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('Holding lease')) resolve(child);
      });
      child.on('exit', () => reject(new Error(`lease --hold exited: ${stderr}`)));
    });
  }

  it('killed with SIGKILL: released within the renewal interval plus 1 s, HolderGone', async () => {
    const child = await hold('held-kill');
    expect((await fleet.request('held-kill')).status?.phase).toBe('Granted');
    child.kill('SIGKILL');
    const took = await gone('held-kill', 5000);
    expect(took).toBeLessThanOrEqual(3000);
    const request = await fleet.request('held-kill');
    expect(JSON.stringify(request.status)).toMatch(/"reason":"HolderGone"/);
  });

  it('SIGTERM and Ctrl-C release at once', async () => {
    for (const [name, signal] of [
      ['held-term', 'SIGTERM'],
      ['held-int', 'SIGINT'],
    ] as const) {
      const child = await hold(name);
      const exited = new Promise<number | null>((resolve) =>
        child.on('exit', (code) => resolve(code)),
      );
      child.kill(signal);
      expect(await gone(name, 1500)).toBeLessThan(1500);
      expect(await exited).toBe(signal === 'SIGTERM' ? 143 : 130);
    }
  });

  it('warns once the lease expires soon, and ends LEASE_LOST when it expires while held', async () => {
    const child = spawnPlugin(cluster.kubeconfigPath, fleet.namespace, [
      ...['lease', '--platform', 'ios', '--name', 'held-short', '--duration', '5s', '--hold'],
    ]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    // The controller warns 10 s before the expiry here (expiringSoonMs): at once.
    expect(stderr).toMatch(
      /^warning: lease held-short: the lease expires at \S+Z; kubectl simlock extend held-short --by 30m keeps it$/m,
    );
    expect(code).toBe(21);
    expect(stderr).toMatch(/lease held-short ended while held/);
  }, 30_000);
});

describe('release --force', () => {
  it('releases at once, and its condition and Event name who did it', async () => {
    await fleet.createRequest('forced', { platform: 'ios' });
    await fleet.phase('forced', 'Granted', 20_000);
    const forced = await simlock('release', '--force', 'forced');
    expect(forced.stdout).toBe('Lease forced force-released\n');
    const request = await fleet.request('forced');
    const condition = (
      request.status as { conditions?: { type: string; reason: string; message: string }[] }
    ).conditions?.find((c) => c.type === 'Granted');
    expect(condition).toMatchObject({
      reason: 'ForceReleased',
      message: 'force-released by admin',
    });
    const events = await kubectlEventsOf(cluster, fleet.namespace, 'forced');
    expect(events.stdout).toMatch(
      /ForceReleased\s+leaserequest\/forced\s+Released: force-released by admin/,
    );
  });
});

describe('release on the holder’s death in the cluster (kube-controller-manager’s garbage collector)', () => {
  const podsPath = () => `/api/v1/namespaces/${fleet.namespace}/pods`;
  const jobsPath = () => `/apis/batch/v1/namespaces/${fleet.namespace}/jobs`;

  /** A Pod object as a CI job's pod would be; no kubelet runs, so it stays Pending for good. */
  async function createPod(
    name: string,
    ownerReferences: Record<string, unknown>[] = [],
  ): Promise<string> {
    const pod = (await cluster.admin.create(podsPath(), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, ...(ownerReferences.length > 0 ? { ownerReferences } : {}) },
      spec: { restartPolicy: 'Never', containers: [{ name: 'ci', image: 'ci-runner:1' }] },
    })) as { metadata: { uid: string } };
    return pod.metadata.uid;
  }

  const deviceState = async (id: string | undefined) =>
    (await agent.status())?.devices.find((device) => device.id === id)?.state;

  /** `kubectl simlock lease --owner pod/POD`: granted, owned by the pod, its device leased. */
  async function leaseOwnedBy(name: string, pod: string, podUid: string): Promise<string> {
    const leased = await simlock(
      'lease',
      '--platform',
      'ios',
      '--name',
      name,
      '--owner',
      `pod/${pod}`,
    );
    // Progress lines may come while it waits; no warning (its pod unreadable) and no error.
    expect(leased.stderr).not.toMatch(/warning|"error"/);
    expect(leased.exitCode).toBe(0);
    const request = (await cluster.admin.get(
      `/apis/simlock.dev/v1alpha1/namespaces/${fleet.namespace}/leaserequests/${name}`,
    )) as { metadata: { ownerReferences?: Record<string, unknown>[] } };
    expect(request.metadata.ownerReferences).toEqual([
      { apiVersion: 'v1', kind: 'Pod', name: pod, uid: podUid },
    ]);
    const granted = await fleet.phase(name, 'Granted', 20_000);
    const device = granted.status?.device?.id;
    await eventually(async () => ((await deviceState(device)) === 'leased' ? true : undefined), {
      what: `device ${device} leased`,
    });
    return device ?? '';
  }

  /** Gone from the API (its release finished), its Lease withdrawn, its device ready again. */
  async function releasedAndReclaimed(name: string, device: string): Promise<void> {
    await fleet.requestGone(name);
    await fleet.leaseGone(name);
    await eventually(async () => ((await deviceState(device)) === 'ready' ? true : undefined), {
      what: `device ${device} reclaimed by the agent`,
    });
  }

  it('a request made with --owner pod/NAME goes with the pod: released, its device reclaimed', async () => {
    const uid = await createPod('ci-pod');
    const device = await leaseOwnedBy('owned', 'ci-pod', uid);
    // While the pod is there, nothing collects the request.
    expect((await fleet.request('owned')).status?.phase).toBe('Granted');
    await cluster.admin.delete(`${podsPath()}/ci-pod`);
    await releasedAndReclaimed('owned', device);
  });

  // In a pod, the plugin finds its own pod as a kubelet-run container shows it: KUBERNETES_SERVICE_HOST
  // and HOSTNAME (the pod's name) in its environment, and the service-account volume's namespace
  // file. The plugin runs here in a mount namespace of its own (root; unshare) with a tmpfs on
  // /var/run holding that file, as the kubelet mounts it: the host's /var/run is not touched.
  const canMount =
    process.getuid?.() === 0 &&
    spawnSync('unshare', ['--mount', 'true'], { stdio: 'ignore' }).status === 0;

  function leaseInPod(name: string, pod: string, podNamespace: string) {
    const script = [
      'mount -t tmpfs tmpfs /var/run',
      'mkdir -p /var/run/secrets/kubernetes.io/serviceaccount',
      'printf %s "$POD_NAMESPACE" > /var/run/secrets/kubernetes.io/serviceaccount/namespace',
      'exec "$@"',
    ].join(' && ');
    return runCommand(
      'unshare',
      [
        '--mount',
        '--propagation',
        'private',
        'sh',
        '-c',
        script,
        'sh',
        plugin,
        'lease',
        '--platform',
        'ios',
        '--name',
        name,
        '--kubeconfig',
        cluster.kubeconfigPath,
        '-n',
        fleet.namespace,
      ],
      {
        env: {
          ...process.env,
          KUBERNETES_SERVICE_HOST: '10.0.0.1',
          KUBERNETES_SERVICE_PORT: '443',
          HOSTNAME: pod,
          POD_NAMESPACE: podNamespace,
        },
      },
    );
  }

  it.skipIf(!canMount)(
    'run inside a pod (its environment and service-account namespace file), the plugin makes the pod the owner',
    async () => {
      const uid = await createPod('ci-runner-7f9c');
      const leased = await leaseInPod('in-pod', 'ci-runner-7f9c', fleet.namespace);
      // Progress lines may come while it waits; no warning (its pod unreadable) and no error.
      expect(leased.stderr).not.toMatch(/warning|"error"/);
      expect(leased.exitCode).toBe(0);
      const request = (await cluster.admin.get(
        `/apis/simlock.dev/v1alpha1/namespaces/${fleet.namespace}/leaserequests/in-pod`,
      )) as { metadata: { ownerReferences?: Record<string, unknown>[] } };
      expect(request.metadata.ownerReferences).toEqual([
        { apiVersion: 'v1', kind: 'Pod', name: 'ci-runner-7f9c', uid },
      ]);
      const device = (await fleet.phase('in-pod', 'Granted', 20_000)).status?.device?.id ?? '';
      await cluster.admin.delete(`${podsPath()}/ci-runner-7f9c`);
      await releasedAndReclaimed('in-pod', device);

      // A pod of another namespace is not this request's owner (an ownerReference cannot cross
      // namespaces): no owner, and the request outlives it.
      const elsewhere = await leaseInPod('not-in-pod', 'ci-runner-7f9c', 'another-namespace');
      expect(elsewhere.exitCode).toBe(0);
      const unowned = (await cluster.admin.get(
        `/apis/simlock.dev/v1alpha1/namespaces/${fleet.namespace}/leaserequests/not-in-pod`,
      )) as { metadata: { ownerReferences?: unknown[] } };
      expect(unowned.metadata.ownerReferences).toBeUndefined();
      await simlock('release', 'not-in-pod');
    },
  );

  it('and with the Job that owns the pod, deleted with propagationPolicy Background', async () => {
    const job = (await cluster.admin.create(jobsPath(), {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'ci' },
      spec: {
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'ci', image: 'ci-runner:1' }] },
        },
      },
    })) as { metadata: { uid: string } };
    // No job controller runs: the test makes the Job's pod, owned as the job controller owns it.
    const podUid = await createPod('ci-job-pod', [
      {
        apiVersion: 'batch/v1',
        kind: 'Job',
        name: 'ci',
        uid: job.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    const device = await leaseOwnedBy('job-owned', 'ci-job-pod', podUid);
    await cluster.admin.delete(`${jobsPath()}/ci`, {
      query: { propagationPolicy: 'Background' },
    });
    await eventually(
      () =>
        cluster.admin.get(`${podsPath()}/ci-job-pod`).then(
          () => undefined,
          (error: unknown) => (isNotFound(error) ? true : undefined),
        ),
      { what: 'the Job’s pod collected' },
    );
    await releasedAndReclaimed('job-owned', device);
  });
});
