// Direct mode over TLS (issue 35, docs/adr/0025-agent-tls.md), end to end: a real agent process
// serving its exec server over HTTPS with a certificate made by openssl, the controller in-process,
// and real exec proxies. A proxy that trusts the agent's CA runs tools there; one that does not
// refuses UNAVAILABLE, naming the worker, and the agent receives nothing (it logs the handshake the
// proxy broke off, and runs no tool). A second agent, on plain HTTP, is refused by a proxy without
// --allow-plain-http-agents and served by one with it.
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { get } from 'node:https';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimlockError } from '../api/index.js';
import { createProxyApp } from '../proxy/index.js';
import { execThroughProxy, silentLogger } from '../runtime/index.js';
import { startAgent, type AgentProcess } from '../test/cluster/agents.js';
import { startExecFleet, type ExecFleet } from '../test/cluster/exec-fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { makeCa, makeLeaf, type CertificateAuthority } from '../test/tls-certificates.js';

const cluster = useCluster('agent-tls');
let dir: string;
let agentsCa: CertificateAuthority;
let env: ExecFleet | undefined;
let plainAgent: AgentProcess | undefined;
const proxies: Server[] = [];

const phone = {
  id: 'R58N12ABCDE',
  name: 'Pixel 8',
  model: 'Pixel 8',
  platform: 'android',
  os: '34',
  physical: true,
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'simlock-agent-tls-'));
  agentsCa = await makeCa(dir, 'agents-ca');
  const leaf = await makeLeaf(dir, 'agent-a', agentsCa, ['127.0.0.1', 'localhost']);
  env = await startExecFleet(cluster, {
    tools: { simctl: { exitCode: 0, stdout: 'com.example.app\n' } },
    agentConfig: { tls: { certFile: leaf.certFile, keyFile: leaf.keyFile } },
  });
  plainAgent = await startAgent({
    admin: cluster.admin,
    kubeconfigPath: cluster.kubeconfigPath,
    name: env.fleet.name('b'),
    namespace: env.fleet.namespace,
    fleet: env.fleet.namespace,
    script: { platforms: ['android'], devices: [phone] },
    execAllowedIdentities: [`system:serviceaccount:${env.fleet.namespace}:simlock-proxy`],
  });
  // Worker b joined after the controller started: a request that only it serves fails at once
  // (NO_CAPACITY, no-worker) while the controller has not seen it take requests yet.
  await env.workersReady(2);
  await env.fleet.createRequest('sim', { platform: 'ios', model: 'iPhone 16' });
  await env.fleet.createRequest('phone', { platform: 'android', physical: true });
  for (const name of ['sim', 'phone']) {
    // Once (of many runs, under load) the phone was not granted within 20 s: say why if again.
    await env.fleet.phase(name, 'Granted', 20_000).catch(async (error: unknown) => {
      const request = await env?.fleet.request(name);
      const worker = await plainAgent?.status();
      throw new Error(
        `${String(error)}\nrequest ${name}: ${JSON.stringify(request?.status)}\n` +
          `worker b: ${JSON.stringify(worker?.devices)}\nagent b: ${plainAgent?.output().slice(-2000)}`,
      );
    });
  }
}, 90_000);

afterAll(async () => {
  for (const proxy of proxies) proxy.close();
  await plainAgent?.kill('SIGKILL');
  await env?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A proxy of the fleet's identity with these agent TLS settings; its URL. */
async function proxy(agentTls: { caFile?: string; allowPlainHttp?: boolean }): Promise<string> {
  const token = env?.token ?? '';
  const app = createProxyApp({
    client: cluster.admin,
    log: silentLogger,
    agentToken: () => token,
    agentTls,
  });
  const server = await new Promise<Server>((resolve) => {
    const listening: Server = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  proxies.push(server);
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function exec(url: string, lease: string, tool: 'simctl' | 'adb', args: string[]) {
  const output: string[] = [];
  return execThroughProxy({
    url,
    token: env?.token ?? '',
    namespace: env?.fleet.namespace ?? '',
    lease,
    tool,
    args,
    onOutput: (_stream, data) => output.push(data),
  }).then(({ exitCode }) => ({ exitCode, output: output.join('') }));
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

/** The TLS agent's count of tools run, read from its /metrics over HTTPS (verified by its CA). */
async function toolsRun(): Promise<number> {
  const endpoint = (await env?.agent.status())?.endpoint ?? '';
  const text = await new Promise<string>((resolve, reject) => {
    get(new URL('/metrics', endpoint), { ca: readFileSync(agentsCa.certFile) }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve(body));
    }).once('error', reject);
  });
  const line = text
    .split('\n')
    .find((row) => row.startsWith('simlock_agent_execs_total{outcome="ran"} '));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('direct mode over TLS', () => {
  it('the agent advertises an https:// endpoint', async () => {
    expect((await env?.agent.status())?.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
  });

  it('a proxy that trusts the agent’s CA runs tools there', async () => {
    const trusting = await proxy({ caFile: agentsCa.certFile });
    const before = await toolsRun();
    const { exitCode, output } = await exec(trusting, 'sim', 'simctl', ['listapps']);
    expect(exitCode).toBe(0);
    expect(output).toContain('com.example.app');
    expect(await toolsRun()).toBe(before + 1);
  });

  it('a proxy that does not trust the agent’s certificate refuses to send it anything', async () => {
    const otherCa = await makeCa(dir, 'other-ca');
    const untrusting = await proxy({ caFile: otherCa.certFile });
    const before = await toolsRun();
    const error = await refusal(exec(untrusting, 'sim', 'simctl', ['listapps']));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain(`the agent of ${env?.fleet.name('a')} (https://127.0.0.1:`);
    expect(error.message).toContain('has a certificate this proxy does not trust');
    // The agent saw the proxy break the handshake off (so nothing, the token included, was sent
    // after it), and ran nothing.
    await eventually(
      () => (env?.agent.output().includes('a TLS handshake failed') ? true : undefined),
      { what: 'the agent logs the broken-off handshake', timeoutMs: 10_000 },
    );
    expect(await toolsRun()).toBe(before);
  });

  it('a plain HTTP agent is refused without --allow-plain-http-agents, served with it', async () => {
    const strict = await proxy({ caFile: agentsCa.certFile });
    const error = await refusal(exec(strict, 'phone', 'adb', ['shell', 'true']));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(
      new RegExp(
        `^the agent of ${env?.fleet.name('b')} serves plain HTTP \\(http://127\\.0\\.0\\.1:\\d+\\), which this proxy does not dial: .*--allow-plain-http-agents for a local demo$`,
      ),
    );
    const demo = await proxy({ allowPlainHttp: true });
    const { exitCode, output } = await exec(demo, 'phone', 'adb', ['shell', 'true']);
    expect(exitCode).toBe(0);
    expect(output).toContain(`adb -s ${phone.id} shell true`);
  });
});
