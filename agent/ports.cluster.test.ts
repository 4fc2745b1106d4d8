// Two agents on one host given the same port (the default local API port 8781, or the same exec
// port): the second stops at once, exit 2, with one line naming the address and the setting to
// change, before it registers anything. It used to run on without that server, saying nothing.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { isNotFound, simlockPath } from '../runtime/index.js';
import { iosSimulatorScript, startFleetAgent, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { launchArgs } from '../test/launch.js';

const cluster = useCluster('agent-ports');
let fleet: TestFleet;
let first: AgentProcess;
let dir: string;

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  first = await startFleetAgent(cluster, fleet, iosSimulatorScript());
  dir = await mkdtemp(join(tmpdir(), 'simlock-agent-ports-'));
});
afterAll(async () => {
  await first?.kill();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs a second agent with these `listen` and `local` settings until it exits. */
async function secondAgent(
  name: string,
  ports: { listen: number; local: number },
): Promise<{ code: number | null; stderr: string }> {
  const scriptPath = join(dir, `${name}.script.yaml`);
  const configPath = join(dir, `${name}.yaml`);
  await writeFile(scriptPath, stringify(iosSimulatorScript()));
  await writeFile(
    configPath,
    stringify({
      name,
      namespace: fleet.namespace,
      drivers: ['fake'],
      fakeScript: scriptPath,
      listen: { host: '127.0.0.1', port: ports.listen },
      local: { host: '127.0.0.1', port: ports.local },
    }),
  );
  const child = spawn(
    process.execPath,
    [...launchArgs('agent'), '--config', configPath, '--kubeconfig', cluster.kubeconfigPath],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SIMLOCK_LOG_LEVEL: 'warn' } },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  // Whichever comes first: it stops, or it registers its Worker (it runs on without the server).
  let stopped = false;
  void exited.then(() => (stopped = true));
  const registeredFirst = await eventually(
    async () => (stopped ? false : (await registered(name)) || undefined),
    { timeoutMs: 30_000, intervalMs: 100, what: `agent ${name} stopping or registering` },
  );
  if (registeredFirst) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`the agent registered and ran on, its port taken; it said:\n${stderr}`);
  }
  return { code: await exited, stderr };
}

async function registered(name: string): Promise<boolean> {
  try {
    await cluster.admin.get(simlockPath('worker', { name }));
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

describe('an agent whose port is taken', () => {
  it('stops with exit 2 naming the local API port the first agent holds', async () => {
    const name = fleet.name('b');
    const second = await secondAgent(name, { listen: 0, local: first.localPort });
    expect(second.stderr).toBe(
      `simlock-agent: cannot listen on 127.0.0.1:${first.localPort} for the local leasing API: ` +
        'the port is in use (by another agent?) (EADDRINUSE); set local.port (--local-port) to another port\n',
    );
    expect(second.code).toBe(2);
    expect(await registered(name)).toBe(false);
  });

  it('stops with exit 2 naming the exec port the first agent holds', async () => {
    const status = await first.status();
    const execPort = Number(new URL(String(status?.endpoint)).port);
    const name = fleet.name('c');
    const second = await secondAgent(name, { listen: execPort, local: 0 });
    expect(second.stderr).toBe(
      `simlock-agent: cannot listen on 127.0.0.1:${execPort} for the exec server: ` +
        'the port is in use (by another agent?) (EADDRINUSE); set listen.port (--listen-port) to another port\n',
    );
    expect(second.code).toBe(2);
    expect(await registered(name)).toBe(false);
  });
});
