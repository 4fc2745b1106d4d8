// Exec through the fleet (DESIGN.md §6): the real proxy (TokenReview, SubjectAccessReview), a real
// agent process with the fake driver, and the controller, against the real API server.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SimlockError, type ExecTool } from '../api/index.js';
import { execThroughProxy } from '../runtime/index.js';
import { iosSimulatorScript, type AgentProcess } from '../test/cluster/agents.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import { bindRole } from '../test/cluster/role-bindings.js';
import { serviceAccountToken } from '../test/cluster/service-account-token.js';
import type { TestFleet } from '../test/cluster/fleet.js';
import { runCommand, useCluster } from '../test/cluster/harness.js';
import { aScriptedEnrolledIphone, aScriptedPhone } from '../test/fixtures/driver-devices.js';

const cluster = useCluster('exec');
let env: ExecFleet | undefined;
let fleet: TestFleet;
let agent: AgentProcess;
let proxyUrl: string;
const tokens: Record<string, string> = {};

const iphone = aScriptedEnrolledIphone();
const pixel = aScriptedPhone('R58N12ABCDE', {
  name: 'Pixel 8',
  model: 'Pixel 8',
  platform: 'android',
  os: '34',
});

beforeAll(async () => {
  env = await startExecFleet(cluster, {
    script: iosSimulatorScript({
      tools: { simctl: { exitCode: 7, stdout: 'com.example.app\n' } },
      devices: [...(iosSimulatorScript().devices as object[]), iphone, pixel],
      platforms: ['ios', 'android'],
    }),
  });
  ({ fleet, agent, proxyUrl } = env);
  const ns = fleet.namespace;
  tokens.proxy = env.token;
  tokens.alice = await serviceAccountToken(cluster.admin, ns, 'alice', { create: true });
  tokens.bob = await serviceAccountToken(cluster.admin, ns, 'bob', { create: true });
  // alice may exec on leases in this namespace (the fleet's Role `lease-exec`); bob may not.
  await bindRole(cluster.admin, {
    name: 'alice-exec',
    namespace: ns,
    role: 'lease-exec',
    roleKind: 'Role',
    subjects: [{ kind: 'ServiceAccount', name: 'alice', namespace: ns }],
  });

  await fleet.createRequest('phone', { platform: 'ios', physical: true });
  await fleet.createRequest('android', { platform: 'android', physical: true });
  await fleet.createRequest('sim', { platform: 'ios', model: 'iPhone 16' });
  for (const name of ['phone', 'android', 'sim']) await fleet.phase(name, 'Granted', 20_000);
}, 60_000);

afterAll(() => env?.stop());

async function run(lease: string, tool: ExecTool, args: string[], token = tokens.alice ?? '') {
  const output: string[] = [];
  const { exitCode } = await execThroughProxy({
    url: proxyUrl,
    token,
    namespace: fleet.namespace,
    lease,
    tool,
    args,
    onOutput: (_stream, data) => output.push(data),
  });
  return { exitCode, output: output.join('') };
}

async function refusal(promise: Promise<unknown>): Promise<SimlockError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SimlockError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

async function agentMetric(outcome: string): Promise<number> {
  return agentSeries(`simlock_agent_execs_total{outcome="${outcome}"}`);
}

async function agentSeries(series: string): Promise<number> {
  const endpoint = (await agent.status())?.endpoint ?? '';
  const text = await (await fetch(new URL('/metrics', endpoint))).text();
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function proxyMetric(name: string): Promise<number> {
  const text = await (await fetch(`${proxyUrl}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${name} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('exec through the proxy', () => {
  it("serves the agent's devices by state on /metrics, as its Worker's view has them", async () => {
    // The view is written a debounce after the grants: wait until it has all three leased.
    const leased = await vi.waitFor(
      async () => {
        const devices = (await agent.status())?.devices ?? [];
        const count = devices.filter((device) => device.state === 'leased').length;
        expect(count).toBeGreaterThanOrEqual(3);
        return count;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(await agentSeries('simlock_agent_devices{state="leased"}')).toBe(leased);
    expect(await agentSeries('simlock_agent_devices{state="quarantined"}')).toBe(0);
  });

  it('runs devicectl on a physical iOS lease aimed at the leased UDID and streams its exit code', async () => {
    const { exitCode, output } = await run('phone', 'devicectl', ['device', 'info', 'apps']);
    expect(exitCode).toBe(0);
    expect(output).toContain(`devicectl device info apps --device ${iphone.id}`);
  });

  it('runs adb on a physical Android lease with -s <serial>', async () => {
    const { exitCode, output } = await run('android', 'adb', [
      'shell',
      'getprop',
      'ro.product.model',
    ]);
    expect(exitCode).toBe(0);
    expect(output).toContain(`adb -s ${pixel.id} shell getprop ro.product.model`);
  });

  it.each([
    ['devicectl on a virtual lease', 'sim', 'devicectl' as const, ['device', 'info', 'apps']],
    ['simctl on a physical lease', 'phone', 'simctl' as const, ['launch', 'com.example.app']],
    ['adb on an iOS lease', 'sim', 'adb' as const, ['devices']],
  ])(
    "refuses %s with the worker's code and HTTP status, and nothing runs",
    async (_case, lease, tool, args) => {
      const ranBefore = await agentMetric('ran');
      const error = await refusal(run(lease, tool, args));
      expect(error.code).toBe('TOOL_NOT_ALLOWED');
      expect(await agentMetric('ran')).toBe(ranBefore);
      // The HTTP status as the caller sees it.
      const answer = await fetch(
        `${proxyUrl}/v1/namespaces/${fleet.namespace}/leases/${lease}/exec`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${tokens.alice}`, 'content-type': 'application/json' },
          body: JSON.stringify({ tool, args }),
        },
      );
      expect(answer.status).toBe(422);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
        'TOOL_NOT_ALLOWED',
      );
    },
  );

  it('answers 401 without a token and with a token the API server does not accept', async () => {
    for (const authorization of [undefined, 'Bearer not-a-real-token']) {
      const answer = await fetch(`${proxyUrl}/v1/namespaces/${fleet.namespace}/leases/phone/exec`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ tool: 'devicectl', args: [] }),
      });
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe(
        'UNAUTHENTICATED',
      );
    }
  });

  it("asks the API server about a caller's token once for execs close together, and about a refused one every time", async () => {
    // A token of alice's the proxy has not seen yet (each TokenRequest gives a new one).
    const fresh = await serviceAccountToken(cluster.admin, fleet.namespace, 'alice');
    const before = await proxyMetric('simlock_proxy_token_reviews_total');
    for (let exec = 0; exec < 3; exec++) {
      expect((await run('sim', 'simctl', ['listapps', 'booted'], fresh)).exitCode).toBe(7);
    }
    expect(await proxyMetric('simlock_proxy_token_reviews_total')).toBe(before + 1);
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = await refusal(run('sim', 'simctl', ['listapps', 'booted'], 'not-a-real-token'));
      expect(error.code).toBe('UNAUTHENTICATED');
    }
    expect(await proxyMetric('simlock_proxy_token_reviews_total')).toBe(before + 3);
  });

  it('answers 403 to a caller without create leases/exec, here and in another namespace', async () => {
    expect(
      (await refusal(run('phone', 'devicectl', ['device', 'info', 'apps'], tokens.bob))).code,
    ).toBe('FORBIDDEN');
    const other = await execThroughProxy({
      url: proxyUrl,
      token: tokens.alice ?? '',
      namespace: 'kube-system',
      lease: 'phone',
      tool: 'adb',
      args: [],
      onOutput: () => undefined,
    }).catch((error: unknown) => error);
    expect((other as SimlockError).code).toBe('FORBIDDEN');
  });

  it('refuses a body with too many arguments before anything runs', async () => {
    const answer = await fetch(`${proxyUrl}/v1/namespaces/${fleet.namespace}/leases/phone/exec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool: 'devicectl', args: Array.from({ length: 300 }, () => 'x') }),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toMatch(
      /^args/,
    );
  });

  it('answers LEASE_NOT_ACTIVE for a lease that is not granted, NOT_FOUND for none', async () => {
    await fleet.createRequest('waiting', { platform: 'ios', physical: true });
    await fleet.phase('waiting', 'Waiting');
    const waiting = await refusal(run('waiting', 'simctl', ['listapps']));
    expect([waiting.code, waiting.message]).toEqual([
      'LEASE_NOT_ACTIVE',
      `lease ${fleet.namespace}/waiting is not granted (Waiting)`,
    ]);
    const none = await refusal(run('no-such-lease', 'simctl', ['listapps']));
    expect([none.code, none.message]).toEqual([
      'NOT_FOUND',
      `lease ${fleet.namespace}/no-such-lease does not exist`,
    ]);
  });
});

describe('kubectl simlock exec and its shortcuts', () => {
  const plugin = fileURLToPath(new URL('../bin/kubectl-simlock', import.meta.url));
  const bin = fileURLToPath(new URL('../bin', import.meta.url));
  const env = () => ({
    ...process.env,
    SIMLOCK_TOKEN: tokens.alice ?? '',
    SIMLOCK_PROXY_URL: proxyUrl,
    PATH: `${bin}:${cluster.binDir}:${process.env.PATH ?? ''}`,
  });
  const simlock = (args: string[]) =>
    runCommand(plugin, ['--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace, ...args], {
      env: env(),
    });

  it('adb --lease runs on the physical Android phone with -s <serial>, streaming its output', async () => {
    const result = await simlock([
      'adb',
      '--lease',
      'android',
      'shell',
      'getprop',
      'ro.product.model',
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`adb -s ${pixel.id} shell getprop ro.product.model`);
  });

  it("exec <lease> -- simctl … exits with the tool's exit code", async () => {
    const result = await simlock(['exec', 'sim', '--', 'simctl', 'listapps']);
    expect(result.exitCode).toBe(7);
    expect(result.stdout).toContain('com.example.app');
  });

  it('devicectl through the real kubectl, aimed at the leased UDID', async () => {
    const result = await runCommand(
      `${cluster.binDir}/kubectl`,
      [
        'simlock',
        '--kubeconfig',
        cluster.kubeconfigPath,
        '-n',
        fleet.namespace,
        'devicectl',
        '--lease',
        'phone',
        'device',
        'info',
        'apps',
      ],
      { env: env() },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(`--device ${iphone.id}`);
  });

  it('exits 19 with TOOL_NOT_ALLOWED for devicectl on a simulator lease', async () => {
    const result = await simlock(['devicectl', '--lease', 'sim', 'device', 'info', 'apps']);
    expect(result.exitCode).toBe(19);
    expect(result.stderr).toContain('"code":"TOOL_NOT_ALLOWED"');
  });
});
