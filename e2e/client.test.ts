// The typed client (client/, `simlock/client`) against a fleet that serves leases end to end: a
// real agent with the fake driver, the controller, the exec proxy. One test per call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LeaseCancelledError,
  SimlockClient,
  SimlockError,
  type LeaseProgress,
} from '../client/index.js';
import { isNotFound } from '../runtime/index.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('client');
let env: ExecFleet;
let client: SimlockClient;

beforeAll(async () => {
  // simctl answers 0 here, as a screenshot must; e2e/mcp.test.ts checks another exit code.
  env = await startExecFleet(cluster, { tools: { simctl: { stdout: 'com.example.app\n' } } });
  client = SimlockClient.connect({
    kubeconfig: cluster.kubeconfigPath,
    namespace: env.fleet.namespace,
    proxyUrl: env.proxyUrl,
    token: env.token,
  });
}, 60_000);

afterAll(() => env.stop());

async function gone(name: string): Promise<void> {
  await eventually(
    async () => {
      try {
        await env.fleet.request(name);
        return undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    },
    { timeoutMs: 20_000, what: `request ${name} gone` },
  );
}

describe('SimlockClient', () => {
  it('lease resolves to the granted device, reporting progress; a model nobody has rejects UNKNOWN_MODEL', async () => {
    const seen: LeaseProgress[] = [];
    const handle = await client.lease(
      { platform: 'ios', model: 'iPhone 16' },
      { onProgress: (progress) => seen.push(progress) },
    );
    expect(handle.device?.model).toBe('iPhone 16');
    expect(handle.worker).toBe(env.fleet.name('a'));
    expect(seen.at(-1)).toMatchObject({ request: handle.name, phase: 'Granted' });
    expect((await env.fleet.request(handle.name)).status?.phase).toBe('Granted');

    const refused = await client
      .lease({ platform: 'ios', model: 'Nokia 3310' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SimlockError);
    expect(refused).toMatchObject({ code: 'UNKNOWN_MODEL' });
    await handle.release();
  });

  it('lease rejects a bad spec naming its field, before anything is created', async () => {
    const bad = await client
      .lease({ platform: 'ios', waitTimeoutSeconds: -1 })
      .catch((error: unknown) => error);
    expect(bad).toMatchObject({ code: 'USAGE', details: { field: 'waitTimeoutSeconds' } });
  });

  it('a lease waiting on a full fleet is withdrawn when its signal aborts', async () => {
    const first = await client.lease({ platform: 'ios' });
    const second = await client.lease({ platform: 'ios' });
    const stop = new AbortController();
    let waiting: LeaseProgress | undefined;
    const third = client.lease(
      { platform: 'ios' },
      {
        signal: stop.signal,
        onProgress: (progress) => {
          if (progress.phase === 'Waiting' && progress.workers.length > 0) {
            waiting = progress;
            stop.abort();
          }
        },
      },
    );
    const error = await third.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LeaseCancelledError);
    expect(waiting?.workers[0]).toMatchObject({ label: 'worker-a', reason: 'full' });
    const request = (error as LeaseCancelledError).request;
    expect((error as LeaseCancelledError).withdrawn).toBe(`request ${request} withdrawn`);
    await gone(request);
    await Promise.all([first.release(), second.release()]);
  });

  it('exec runs the tool on the device and answers its exit code, output as it comes', async () => {
    const handle = await client.lease({ platform: 'ios' });
    let stdout = '';
    const exitCode = await handle.exec('simctl', ['listapps'], {
      onOutput: (stream, data) => (stdout += stream === 'stdout' ? data : ''),
    });
    expect(exitCode).toBe(0);
    expect(stdout).toContain('com.example.app');
    await handle.release();
  });

  it('screenshot answers the PNG of the device', async () => {
    const handle = await client.lease({ platform: 'ios' });
    const png = await handle.screenshot();
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await handle.release();
  });

  it('extend moves the expiry by the time asked', async () => {
    const handle = await client.lease({ platform: 'ios', durationSeconds: 600 });
    const before = Date.parse(handle.expiresAt ?? '');
    expect(before).toBe(Date.parse((await env.fleet.lease(handle.name))?.spec.expiresAt ?? ''));
    const extended = await handle.extend({ bySeconds: 60 });
    expect(Date.parse(extended.expiresAt) - before).toBe(60_000);
    expect(extended.capped).toBe(false);
    expect((await env.fleet.lease(handle.name))?.spec.expiresAt).toBe(extended.expiresAt);
    await handle.release();
  });

  it('release lets the device go: the request is gone and the device ready again', async () => {
    const handle = await client.lease({ platform: 'ios' });
    expect(await handle.release()).toEqual({ granted: true });
    await gone(handle.name);
    await env.devicesFree();
  });

  it('a held lease names a holder session that lives until release', async () => {
    const handle = await client.lease({ platform: 'ios' }, { hold: { renewSeconds: 2 } });
    const session = handle.request.spec.holderSession ?? '';
    expect(session).toMatch(/^simlock-holder-/);
    const path = `/apis/coordination.k8s.io/v1/namespaces/${env.fleet.namespace}/leases/${session}`;
    await cluster.admin.get(path);
    await handle.release();
    expect(await cluster.admin.get(path).catch((error: unknown) => isNotFound(error))).toBe(true);
  });

  it('list answers the leases of the namespace, and workers the fleet', async () => {
    const handle = await client.lease({ platform: 'ios' });
    const leases = await client.list();
    expect(leases.map((lease) => lease.metadata.name)).toContain(handle.name);
    const workers = await client.workers();
    const ours = workers.find((worker) => worker.metadata.name === env.fleet.name('a'));
    expect(ours?.spec.label).toBe('worker-a');
    expect(ours?.status?.devices.map((device) => device.id).sort()).toEqual([
      'sim-iphone-1',
      'sim-iphone-2',
    ]);
    await handle.release();
  });
});
