// `kubectl simlock mcp` (docs/MCP.md) as a coding agent's MCP client runs it: the official SDK's
// client starts the plugin as a process, against a fleet that serves leases end to end (a real
// agent with the fake driver, the controller, the exec proxy).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseRequestObject, reasonText, reasonsByWorker } from '../api/index.js';
import { isNotFound, simlockPath } from '../runtime/index.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('mcp');
const plugin = join(fileURLToPath(new URL('../bin/', import.meta.url)), 'kubectl-simlock');
let env: ExecFleet;

beforeAll(async () => {
  env = await startExecFleet(cluster, {
    tools: { simctl: { exitCode: 3, stdout: 'com.example.app\n' } },
  });
}, 60_000);

afterAll(() => env.stop());

/**
 * `renewEvery`: only the story of a killed server shortens it; a 2 s session lapses whenever a
 * loaded machine delays renewals for two seconds, and the controller then releases the session's
 * leases (HolderGone) in the middle of a story about something else.
 */
function serverArgs(renewEvery?: string): string[] {
  return [
    ...['mcp', '--kubeconfig', cluster.kubeconfigPath, '-n', env.fleet.namespace],
    ...(renewEvery ? ['--renew-every', renewEvery] : []),
    ...['--proxy-url', env.proxyUrl],
  ];
}

function serverEnv(): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return { ...Object.fromEntries(inherited), SIMLOCK_TOKEN: env.token };
}

/** The SDK's own stdio client: it spawns the server, as Claude Desktop or an IDE does. */
async function sdkSession(): Promise<Client> {
  const transport = new StdioClientTransport({
    command: plugin,
    args: serverArgs(),
    env: serverEnv(),
    stderr: 'pipe',
  });
  const client = new Client({ name: 'simlock-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/**
 * The server spawned here, the SDK's framing over its pipes, so that a test can close its stdin
 * or kill it outright.
 */
async function ownSession(renewEvery?: string): Promise<{
  client: Client;
  child: ChildProcess & { stdin: NonNullable<ChildProcess['stdin']> };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}> {
  const child = spawn(plugin, serverArgs(renewEvery), {
    env: serverEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const client = new Client({ name: 'simlock-e2e', version: '1.0.0' });
  await client.connect(new StdioServerTransport(child.stdout, child.stdin));
  return { client, child, exited };
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  onMessage?: (message: string) => void,
): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 120_000,
    resetTimeoutOnProgress: true,
    ...(onMessage ? { onprogress: (progress) => onMessage(progress.message ?? '') } : {}),
  })) as CallToolResult;
  const text = result.content
    .map((part) => (part.type === 'text' ? part.text : `<${part.type}>`))
    .join('\n');
  return { ...result, text };
}

function leaseOf(result: CallToolResult): string {
  const lease = result.structuredContent?.lease;
  if (typeof lease !== 'string') throw new Error(`no lease in ${JSON.stringify(result)}`);
  return lease;
}

async function requestGone(name: string, timeoutMs = 20_000): Promise<number> {
  const started = Date.now();
  await eventually(
    async () => {
      try {
        const request = await env.fleet.request(name);
        return request.status?.phase === 'Released' ? true : undefined;
      } catch (error) {
        return isNotFound(error) ? true : undefined;
      }
    },
    { timeoutMs, intervalMs: 50, what: `request ${name} released` },
  );
  return Date.now() - started;
}

describe('kubectl simlock mcp', () => {
  it('lease → exec → release: the exit code and output come back, the device is free after', async () => {
    const client = await sdkSession();
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      expect(tools).toEqual([
        'exec',
        'extend',
        'lease',
        'list_devices',
        'list_leases',
        'release',
        'screenshot',
        'why_waiting',
      ]);
      const leased = await call(client, 'lease', { platform: 'ios', model: 'iPhone 16' });
      expect(leased.isError).toBeFalsy();
      expect(leased.text).toMatch(
        /^Lease lease-\w+: iPhone 16( \(2\))? sim-iphone-[12] on worker-a \(expires at \S+Z\)$/,
      );
      const name = leaseOf(leased);
      const ran = await call(client, 'exec', { tool: 'simctl', args: ['listapps'] });
      expect(ran.isError).toBeFalsy();
      expect(ran.structuredContent).toMatchObject({ lease: name, exitCode: 3 });
      expect(ran.text).toMatch(/^exit code 3\n--- stdout \(\d+ bytes\) ---\n/);
      expect(ran.text).toContain('com.example.app');
      const released = await call(client, 'release', {});
      expect(released.text).toBe(`Lease ${name} released`);
      await requestGone(name);
      await env.devicesFree();
      expect((await call(client, 'list_leases', {})).text).toBe('This session holds no lease.');
    } finally {
      await client.close();
    }
  });

  it('a lease on a full fleet reports its place and each worker’s reason, and is granted once a device frees', async () => {
    await env.fleet.createRequest('fill-1', { platform: 'ios' });
    await env.fleet.createRequest('fill-2', { platform: 'ios' });
    await env.fleet.phase('fill-1', 'Granted', 20_000);
    await env.fleet.phase('fill-2', 'Granted', 20_000);
    const client = await sdkSession();
    try {
      const messages: string[] = [];
      const leasing = call(client, 'lease', { platform: 'ios' }, (message) =>
        messages.push(message),
      );
      // The request as the controller wrote it while it waits: its reasons, worker by worker.
      const waiting = await eventually(
        async () => {
          const list = (await cluster.admin.get(
            simlockPath('leaseRequest', { namespace: env.fleet.namespace }),
          )) as { items: unknown[] };
          return list.items
            .map((item) => LeaseRequestObject.parse(item))
            .find(
              (request) =>
                request.status?.phase === 'Waiting' && reasonsByWorker(request.status).length,
            );
        },
        { timeoutMs: 20_000, what: 'a waiting request with reasons' },
      );
      const entry = reasonsByWorker(waiting.status)[0];
      expect(entry?.worker).toBe(env.fleet.name('a'));
      const expected = `worker-a: ${reasonText(entry ?? { reason: 'full' }, 'ios')}`;
      await eventually(() => (messages.some((m) => m.includes(expected)) ? true : undefined), {
        what: `a progress message with "${expected}"`,
      });
      expect(messages.find((m) => m.includes(expected))).toMatch(
        new RegExp(`^${waiting.metadata.name} queued at \\d+(, (about|no estimate).*)?: `),
      );
      // why_waiting says the same, for this session's request only.
      const why = await call(client, 'why_waiting', {});
      expect(why.text).toContain(`Request ${waiting.metadata.name}`);
      expect(why.text).not.toContain('fill-1');
      // And what would unblock it: a lease on the full worker ending (whose, it does not say).
      expect(why.text).toContain(`  unblock: a lease on ${env.fleet.name('a')} ends in`);
      // The session sees its own leases; every one with `all`.
      expect((await call(client, 'list_leases', {})).text).toBe('This session holds no lease.');
      expect((await call(client, 'list_leases', { all: true })).text).toMatch(/fill-1/);
      // A lease of someone else cannot be released from the session.
      const foreign = await call(client, 'release', { lease: 'fill-1' });
      expect(foreign.isError).toBe(true);
      expect(foreign.text).toMatch(
        /^NOT_FOUND: lease "fill-1" is not one of this session's leases/,
      );

      await cluster.admin.delete(
        simlockPath('leaseRequest', { namespace: env.fleet.namespace, name: 'fill-1' }),
      );
      const granted = await leasing;
      expect(granted.isError).toBeFalsy();
      expect(leaseOf(granted)).toBe(waiting.metadata.name);
      await call(client, 'release', {});
    } finally {
      await client.close();
      await cluster.admin
        .delete(simlockPath('leaseRequest', { namespace: env.fleet.namespace, name: 'fill-2' }))
        .catch(() => undefined);
    }
  });

  it('closing stdin releases the session’s leases, and the server exits 0', async () => {
    const { client, child, exited } = await ownSession();
    const first = leaseOf(await call(client, 'lease', { platform: 'ios' }));
    const second = leaseOf(await call(client, 'lease', { platform: 'ios' }));
    child.stdin.end();
    expect(await exited).toEqual({ code: 0, signal: null });
    // Deleted before the server exits: released at once, not after a renewal interval.
    await requestGone(first, 1000);
    await requestGone(second, 1000);
    await env.devicesFree();
  });

  it('SIGKILL of the server releases its leases within the renewal interval (HolderGone)', async () => {
    const { client, child, exited } = await ownSession('2s');
    const name = leaseOf(await call(client, 'lease', { platform: 'ios' }));
    child.kill('SIGKILL');
    await exited;
    const took = await requestGone(name, 8000);
    // --renew-every 2s, and the controller's reaction.
    expect(took).toBeLessThanOrEqual(3500);
    expect(JSON.stringify((await env.fleet.request(name)).status)).toMatch(/"reason":"HolderGone"/);
    await cluster.admin
      .delete(simlockPath('leaseRequest', { namespace: env.fleet.namespace, name }))
      .catch(() => undefined);
    await env.devicesFree();
  });

  it('bad arguments get errors naming the field, and the session goes on', async () => {
    const { client, child, exited } = await ownSession();
    try {
      const platform = await call(client, 'lease', { platform: 'windows' });
      expect(platform.isError).toBe(true);
      expect(platform.text).toMatch(/platform/);
      const timeout = await call(client, 'lease', { platform: 'ios', waitTimeoutSeconds: -5 });
      expect(timeout.isError).toBe(true);
      expect(timeout.text).toMatch(/waitTimeoutSeconds/);
      const tool = await call(client, 'exec', { tool: 'fastboot', args: ['devices'] });
      expect(tool.isError).toBe(true);
      expect(tool.text).toMatch(/tool/);
      const noLease = await call(client, 'exec', { tool: 'simctl', args: ['listapps'] });
      expect(noLease.text).toBe('USAGE: lease: this session holds no lease; call lease first');
      // A line that is not JSON-RPC at all.
      child.stdin.write('this is not json\n');
      const devices = await call(client, 'list_devices', {});
      expect(devices.isError).toBeFalsy();
      expect(devices.text).toMatch(/^WORKER\s+ID\s+NAME/);
      expect(devices.text).toContain('sim-iphone-1');
    } finally {
      child.stdin.end();
      expect((await exited).code).toBe(0);
    }
  });
});
