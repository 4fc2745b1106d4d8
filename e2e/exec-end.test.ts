// How an exec ends, with real processes: a real agent with the fake driver (its tools are real
// child processes that run for a scripted time), the controller in-process, the real exec proxy,
// and the plugin as a process, against the real API server.
// - Idle time counts from the end of the last exec: the proxy writes that end (it used to leave a
//   45 s horizon to lapse), and `list --leases` reads busy while one runs.
// - A lease that ends while its tool runs (force release, expiry, idleness, holder gone, request
//   deleted) has the tool stopped before its device is reclaimed, and the caller's command exits
//   LEASE_LOST 21 saying why: never two holders driving one device.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivityRecorder, createProxyApp, leaseStatusActivityStore } from '../proxy/index.js';
import { execThroughProxy, silentLogger } from '../runtime/index.js';
import { iosSimulatorScript, type AgentProcess } from '../test/cluster/agents.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import type { TestFleet } from '../test/cluster/fleet.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('exec-end');
const plugin = fileURLToPath(new URL('../bin/kubectl-simlock', import.meta.url));
/** The recording proxy's write interval here (30 s in a real proxy): the bound is idle + this. */
const WRITE_INTERVAL_MS = 2000;
let env: ExecFleet | undefined;
let fleet: TestFleet;
let agent: AgentProcess;
/** The fleet's proxy records no exec activity (an older proxy, or one whose writes fail). */
let quietProxyUrl: string;
let recordingProxy: Server | undefined;
let recordingProxyUrl: string;
let activity: ActivityRecorder | undefined;
let token: string;

beforeAll(async () => {
  env = await startExecFleet(cluster, {
    script: iosSimulatorScript({
      platforms: ['ios', 'android'],
      models: [
        { name: 'iPhone 16', platform: 'ios', class: 'phone' },
        { name: 'Pixel 8', platform: 'android', class: 'phone' },
      ],
      runtimes: [
        { platform: 'ios', version: '18.4' },
        { platform: 'android', version: '34' },
      ],
      devices: [
        ...(iosSimulatorScript().devices as object[]),
        { id: 'emulator-5554', name: 'Pixel 8', model: 'Pixel 8', platform: 'android', os: '34' },
        { id: 'emulator-5556', name: 'Pixel 8', model: 'Pixel 8', platform: 'android', os: '34' },
      ],
      // simctl runs 10 s then prints done; adb runs a minute, longer than any lease here.
      tools: {
        simctl: { delayMs: 10_000, stdout: 'done\n' },
        adb: { delayMs: 60_000, stdout: 'done\n' },
      },
    }),
  });
  ({ fleet, agent, token, proxyUrl: quietProxyUrl } = env);
  activity = new ActivityRecorder({
    store: leaseStatusActivityStore(cluster.admin),
    log: silentLogger,
    intervalMs: WRITE_INTERVAL_MS,
  });
  const app = createProxyApp({
    client: cluster.admin,
    log: silentLogger,
    agentToken: () => token,
    agentTls: { allowPlainHttp: true },
    activity,
  });
  recordingProxy = await new Promise<Server>((resolve) => {
    const server: Server = app.listen(0, '127.0.0.1', () => resolve(server));
  });
  const address = recordingProxy.address();
  recordingProxyUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}, 60_000);

afterAll(async () => {
  activity?.stop();
  recordingProxy?.close();
  await env?.stop();
});

function simlock(...args: string[]) {
  return runCommand(plugin, [
    '--kubeconfig',
    cluster.kubeconfigPath,
    '-n',
    fleet.namespace,
    ...args,
  ]);
}

interface ToolRun {
  /** Resolves once the tool runs on the device (the fake tool's first line came through). */
  running: Promise<void>;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** `kubectl simlock <tool> --lease <lease> ARGS…` as a process, through the given proxy. */
function runTool(lease: string, tool: string, args: string[], proxyUrl = quietProxyUrl): ToolRun {
  const child = spawn(
    plugin,
    [
      '--kubeconfig',
      cluster.kubeconfigPath,
      '-n',
      fleet.namespace,
      tool,
      '--lease',
      lease,
      ...args,
    ],
    { env: { ...process.env, SIMLOCK_TOKEN: token, SIMLOCK_PROXY_URL: proxyUrl } },
  );
  let stdout = '';
  let stderr = '';
  let onRunning = (): void => undefined;
  const running = new Promise<void>((resolve) => (onRunning = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('fake-tool: ')) onRunning();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return {
    running: Promise.race([
      running,
      exited.then((result) => {
        throw new Error(`the tool never ran: exit ${result.code}, ${result.stderr}`);
      }),
    ]),
    exited,
  };
}

/** The fake tool's processes on this host whose argv carries `marker` (what the agent started). */
function toolProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (argv.includes('fake-tool: ') && argv.includes(marker)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

const deviceState = async (id: string | undefined) =>
  (await agent.status())?.devices.find((device) => device.id === id)?.state;

describe('idle time counts from the end of the last exec', () => {
  it('a 10 s exec on a lease with a 5 s idle timeout: busy while it runs, released within 5 s and one write interval of its end', async () => {
    await fleet.createRequest('idle-after', {
      platform: 'ios',
      durationSeconds: 600,
      idleTimeoutSeconds: 5,
    });
    await fleet.phase('idle-after', 'Granted', 20_000);
    const exec = execThroughProxy({
      url: recordingProxyUrl,
      token,
      namespace: fleet.namespace,
      lease: 'idle-after',
      tool: 'simctl',
      args: ['listapps'],
      onOutput: () => undefined,
    });
    // While it runs, list --leases says so (it used to count idle time from the exec's start).
    const busy = await eventually(
      async () => {
        const listed = await simlock('list', '--leases');
        const line = listed.stdout.split('\n').find((row) => row.startsWith('idle-after '));
        return line !== undefined && / busy$/.test(line) ? line : undefined;
      },
      { timeoutMs: 8000, intervalMs: 200, what: 'idle-after listed busy' },
    );
    expect(busy).toMatch(/^idle-after +\S+ +iPhone 16(?: \(2\))? +Granted +in \S+ +busy$/);
    const { exitCode } = await exec;
    const endedAt = Date.now();
    expect(exitCode).toBe(0);
    // Still held at its end: a running exec is never idle.
    expect((await fleet.request('idle-after')).status?.phase).toBe('Granted');
    const released = await fleet.requestWhere(
      'idle-after',
      (request) => request.status?.phase === 'Released',
      5000 + WRITE_INTERVAL_MS + 3000,
    );
    const after = Date.now() - endedAt;
    // Idle from the exec's end (not from its start, nor a horizon 45 s past its last write).
    expect(after).toBeGreaterThanOrEqual(4500);
    expect(after).toBeLessThanOrEqual(5000 + WRITE_INTERVAL_MS + 1000);
    expect(JSON.stringify(released.status)).toMatch(/"reason":"Idle"/);
  }, 40_000);
});

describe('a lease that ends while its tool runs', () => {
  /**
   * Runs `adb shell sleep <marker>` (a minute long) on the lease, ends the lease with `end`, and
   * checks: the command exits LEASE_LOST 21 saying why, the tool's output never came to its end,
   * and the tool was gone by the time the device was ready for another lease.
   */
  async function endWhileRunning(
    name: string,
    end: () => Promise<unknown>,
    why: RegExp,
  ): Promise<void> {
    const granted = await fleet.phase(name, 'Granted', 20_000);
    const device = granted.status?.device?.id;
    const marker = `sleep-${name}-${Date.now()}`;
    const tool = runTool(name, 'adb', ['shell', 'sleep', marker]);
    await tool.running;
    expect(toolProcesses(marker).length).toBeGreaterThan(0);
    await end();

    // The tool would run a minute: its command must end well before, stopped.
    let timer: NodeJS.Timeout | undefined;
    const result = await Promise.race([
      tool.exited,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new Error('the tool went on running after its lease ended')),
          20_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    expect(result.code, result.stderr).toBe(21);
    const error = JSON.parse(result.stderr.trim().split('\n').at(-1) ?? '{}') as {
      error?: { code?: string; message?: string };
    };
    expect(error.error?.code).toBe('LEASE_LOST');
    expect(error.error?.message).toMatch(
      new RegExp(`^lease ${name} ended while the tool ran: ${why.source}; the tool was stopped$`),
    );
    expect(result.stdout).toContain(`fake-tool: adb -s ${device} shell sleep ${marker}`);
    expect(result.stdout).not.toContain('done');

    // The first moment the device is ready again, for anyone, no tool of the old lease runs on it.
    await eventually(async () => ((await deviceState(device)) === 'ready' ? true : undefined), {
      timeoutMs: 20_000,
      intervalMs: 50,
      what: `device ${device} ready again`,
    });
    expect(toolProcesses(marker)).toEqual([]);
  }

  it('released by force', async () => {
    await fleet.createRequest('forced', { platform: 'android', durationSeconds: 600 });
    await endWhileRunning(
      'forced',
      async () => {
        const forced = await simlock('release', '--force', 'forced');
        expect(forced.stdout).toBe('Lease forced force-released\n');
      },
      /lease released by force \(force-released by admin\)/,
    );
  }, 60_000);

  it('its request deleted', async () => {
    await fleet.createRequest('deleted', { platform: 'android', durationSeconds: 600 });
    await endWhileRunning(
      'deleted',
      () =>
        cluster.kubectl([
          'delete',
          'leaserequest',
          'deleted',
          '-n',
          fleet.namespace,
          '--wait=false',
        ]),
      /request deleted/,
    );
  }, 60_000);

  it('expired', async () => {
    // Long enough that the plugin, slow to start under load, still finds it granted.
    await fleet.createRequest('expiring', { platform: 'android', durationSeconds: 8 });
    await endWhileRunning('expiring', () => Promise.resolve(), /lease expired \(.+\)/);
  }, 60_000);

  it('released for idleness (the exec went through a proxy that records no activity)', async () => {
    await fleet.createRequest('idling', {
      platform: 'android',
      durationSeconds: 600,
      idleTimeoutSeconds: 6,
    });
    await endWhileRunning(
      'idling',
      () => Promise.resolve(),
      /released for idleness \(no exec on it for 6s\)/,
    );
  }, 60_000);

  it('its holder gone (lease --hold killed)', async () => {
    const holder = spawn(plugin, [
      ...['--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace],
      ...['lease', '--platform', 'android', '--name', 'held', '--hold', '--renew-every', '2s'],
    ]);
    await new Promise<void>((resolve, reject) => {
      let stderr = '';
      holder.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('Holding lease')) resolve();
      });
      holder.on('exit', () => reject(new Error(`lease --hold exited: ${stderr}`)));
    });
    await endWhileRunning(
      'held',
      () => Promise.resolve(holder.kill('SIGKILL')),
      /holder gone \(its holder did not renew its session within 2s\)/,
    );
  }, 60_000);
});
