// A quarantined simulator put back in service by an operator, end to end: a real agent (fake
// driver) whose boot of sim-iphone-1 fails quarantines it, tries it again once (the config's one
// short backoff) and then shows it in its Worker waiting for an operator; `kubectl simlock device
// unquarantine` (the plugin as a process) adds the entry to the Worker's spec, the agent reads it
// and ends the quarantine, as its Worker's status then shows, and the next lease gets the device.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerObject, type Device } from '../api/index.js';
import { simlockPath } from '../runtime/index.js';
import { iosSimulatorScript, startFleetAgent, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { eventually, runCommand, useCluster } from '../test/cluster/harness.js';

const cluster = useCluster('quarantine');
const binDir = fileURLToPath(new URL('../bin/', import.meta.url));
let fleet: TestFleet;
let agent: AgentProcess;

beforeAll(async () => {
  fleet = await TestFleet.create(cluster);
  agent = await startFleetAgent(
    cluster,
    fleet,
    iosSimulatorScript({ failures: { boot: ['sim-iphone-1'] } }),
    { quarantine: { retryBackoffSeconds: [1] } },
  );
});
afterAll(async () => {
  await agent?.kill();
  await fleet?.cleanup();
});

function simlock(...args: string[]) {
  return runCommand(`${binDir}kubectl-simlock`, [...args, '--kubeconfig', cluster.kubeconfigPath]);
}

/** A lease through the agent's local API, answered at once (granted, or why not). */
async function localLease(): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${agent.localPort}/v1/local/leases`, {
    method: 'POST',
    body: JSON.stringify({ platform: 'ios', model: 'iPhone 16', noWait: true }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function device(id: string): Promise<Device | undefined> {
  return (await agent.status())?.devices.find((entry) => entry.id === id);
}

describe('a quarantined device and its operator', () => {
  it('waits for an operator after its retries, and `device unquarantine` puts it back', async () => {
    // The first shut-down iPhone 16 by id is sim-iphone-1: its boot fails, it is quarantined.
    expect((await localLease()).status).not.toBe(200);
    const waiting = await eventually(
      async () => {
        const entry = await device('sim-iphone-1');
        return entry?.quarantine?.retries === 1 && entry.quarantine.nextRetryAt === undefined
          ? entry
          : undefined;
      },
      { what: 'sim-iphone-1 quarantined, its one retry failed, waiting for an operator' },
    );
    expect(waiting.state).toBe('quarantined');
    expect(waiting.quarantine?.reason).toMatch(/^boot failed: .*; retry 1 failed: /);

    // A device that is not quarantined, or a worker that does not exist: NOT_FOUND, exit 6.
    const notQuarantined = await simlock('device', 'unquarantine', agent.name, 'sim-iphone-2');
    expect(notQuarantined.exitCode).toBe(6);
    expect(JSON.parse(notQuarantined.stderr)).toMatchObject({
      error: {
        code: 'NOT_FOUND',
        message: `device "sim-iphone-2" is not quarantined on worker "${agent.name}"`,
      },
    });
    const noWorker = await simlock('device', 'unquarantine', 'no-such-worker', 'sim-iphone-1');
    expect(noWorker.exitCode).toBe(6);
    expect(JSON.parse(noWorker.stderr)).toMatchObject({
      error: { code: 'NOT_FOUND', message: 'worker "no-such-worker" not found' },
    });

    // The operator fixed the host (the stand-in boots it now) and puts it back.
    await agent.setScript(iosSimulatorScript());
    const done = await simlock('device', 'unquarantine', agent.name, 'sim-iphone-1', '-o', 'json');
    expect(done.exitCode, done.stderr).toBe(0);
    const printed = JSON.parse(done.stdout) as { worker: string; device: string; at: string };
    expect(printed).toMatchObject({ worker: agent.name, device: 'sim-iphone-1' });
    const worker = WorkerObject.parse(
      await cluster.admin.get(simlockPath('worker', { name: agent.name })),
    );
    expect(worker.spec.unquarantine).toEqual([{ device: 'sim-iphone-1', at: printed.at }]);

    // The agent ends the quarantine: the Worker's status no longer shows it.
    await eventually(
      async () => ((await device('sim-iphone-1'))?.quarantine === undefined ? true : undefined),
      { what: "sim-iphone-1's quarantine gone from the Worker's status" },
    );
    // Back in service: the next lease gets it.
    const granted = await localLease();
    expect(granted).toMatchObject({ status: 200, body: { device: { id: 'sim-iphone-1' } } });
    await eventually(
      async () => ((await device('sim-iphone-1'))?.state === 'leased' ? true : undefined),
      { what: 'sim-iphone-1 leased in the Worker status' },
    );
  });
});
