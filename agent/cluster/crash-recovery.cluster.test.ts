// A leased simulator that crashes, against the real API server: the agent (in this process, with
// the fake driver, its exec server on a loopback port) boots it again under the same lease, the
// Lease staying Granted and saying DeviceRecovering (DeviceCrashed) then DeviceRecovered; an exec
// during the recovery is refused at once with UNAVAILABLE and when the device should be back, one
// after it runs. A third crash within ten minutes ends the lease Lost and quarantines the device.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEASE_FINALIZER, LeaseObject } from '../../api/index.js';
import { silentLogger, simlockPath, systemClock } from '../../runtime/index.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { parseAgentConfig } from '../config.js';
import { AgentCore } from '../core.js';
import type { DriverDevice } from '../drivers/driver.js';
import { FakeDriver } from '../drivers/fake/fake.js';
import { ClusterAgent } from './agent.js';
import { AgentMetrics, createExecApp } from './http.js';
import { aLease } from '../../test/fixtures/objects.js';
import { makeLeaseNamespace } from '../../test/cluster/leases.js';

const cluster = useCluster('crash-recovery');
const LEASE = 'crashing';
const DEVICE = 'sim-1';

/** The fake driver whose boots wait for the test to let them finish (no timing guesses). */
class GatedDriver extends FakeDriver {
  #release: (() => void) | undefined;
  #gate: Promise<void> | undefined;
  hold(): void {
    this.#gate = new Promise((resolve) => (this.#release = resolve));
  }
  release(): void {
    this.#release?.();
    this.#gate = undefined;
  }
  override async boot(device: DriverDevice): Promise<void> {
    await this.#gate;
    return super.boot(device);
  }
}

const clock = systemClock();
const driver = new GatedDriver(
  {
    models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
    runtimes: [{ platform: 'ios', version: '18.4' }],
    devices: [
      {
        id: DEVICE,
        name: 'iPhone 16 A',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
        booted: true,
      },
    ],
    bootMs: 20,
  },
  { clock },
);
let core: AgentCore;
let agent: ClusterAgent;
let server: Server;
let execUrl: string;
/** The agent's Lease namespace (ADR 0034), where this file's Lease is made. */
let leaseNamespace: string;
const metrics = new AgentMetrics();

beforeAll(async () => {
  const config = parseAgentConfig({
    name: `${cluster.namespace}-a`,
    namespace: cluster.namespace,
    drivers: ['fake'],
    fakeScript: 'unused.yaml',
    endpoint: 'http://127.0.0.1:1',
    limits: { running: 2 },
    probeIntervalMs: 100,
    refreshIntervalMs: 500,
    healthIntervalMs: 1000,
    viewDebounceMs: 50,
    reclaim: 'shutdown',
    heartbeat: { durationSeconds: 10, renewEverySeconds: 2 },
  });
  core = new AgentCore({ config, driver, clock, machine: { cores: 4, memoryMb: 16_384 } });
  metrics.watchDevices(core);
  agent = new ClusterAgent({ client: cluster.admin, core, config, clock, log: silentLogger });
  const app = express();
  app.use(
    createExecApp({
      agent,
      core,
      config,
      verifyToken: () => Promise.resolve('the-exec-proxy'),
      log: silentLogger,
      metrics,
    }),
  );
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  execUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/exec`;
  leaseNamespace = await makeLeaseNamespace(cluster.admin, agent.name);
  await agent.start();
});

/** A metric's values by its one label. */
async function series(name: string): Promise<Record<string, number>> {
  const values = (await metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  return Object.fromEntries(
    values.map((value) => [String(Object.values(value.labels)[0]), value.value]),
  );
}

afterAll(async () => {
  await agent?.stop();
  server?.close();
});

async function lease(): Promise<LeaseObject | undefined> {
  const object = await cluster.admin
    .get(simlockPath('lease', { namespace: leaseNamespace, name: LEASE }))
    .catch(() => undefined);
  return object === undefined ? undefined : LeaseObject.parse(object);
}

/** Waits until the Lease's status passes `check`. */
function leaseWhere(what: string, check: (status: LeaseObject['status']) => boolean) {
  return eventually(
    async () => {
      const current = await lease();
      return current?.status && check(current.status) ? current.status : undefined;
    },
    { timeoutMs: 20_000, what },
  );
}

/** One exec through the agent's exec server: the error it answers, or the SSE it streams. */
async function exec(): Promise<{ status: number; body: string }> {
  const response = await fetch(execUrl, {
    method: 'POST',
    headers: { authorization: 'Bearer a-token', 'content-type': 'application/json' },
    body: JSON.stringify({
      namespace: leaseNamespace,
      lease: LEASE,
      tool: 'simctl',
      args: ['listapps'],
    }),
  });
  return { status: response.status, body: await response.text() };
}

const recovering = (status: LeaseObject['status']) =>
  status?.conditions?.[0]?.reason === 'DeviceCrashed' && status.recovery !== undefined;
const recovered = (status: LeaseObject['status']) =>
  status?.conditions?.[0]?.reason === 'DeviceRecovered' && status.recovery === undefined;

describe('a leased device that crashes', () => {
  it('is booted again under the same lease, the holder told on the Lease', async () => {
    await cluster.admin.create(
      simlockPath('lease', { namespace: leaseNamespace }),
      aLease(LEASE)
        .finalizer(LEASE_FINALIZER)
        .worker(agent.name)
        .device({ platform: 'ios', model: 'iPhone 16' })
        .expiresIn()
        .obj(),
    );
    await leaseWhere('the grant', (status) => status?.phase === 'Granted');
    expect(await exec()).toMatchObject({
      status: 200,
      body: expect.stringContaining('event: exit') as unknown,
    });

    driver.hold();
    driver.crash(DEVICE);
    const during = await leaseWhere('DeviceRecovering', recovering);
    expect(during).toMatchObject({
      phase: 'Granted',
      device: { id: DEVICE },
      recovery: { cause: 'shut down', crashes: 1, crashBudget: 3, estimatedSeconds: 30 },
      conditions: [
        {
          type: 'DeviceRecovering',
          status: 'True',
          reason: 'DeviceCrashed',
          message: expect.stringMatching(
            /^the device stopped \(shut down\); booting it again, back in about \d+ s$/,
          ) as unknown,
        },
      ],
    });
    const refused = await exec();
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toEqual({
      error: {
        code: 'UNAVAILABLE',
        message: expect.stringMatching(
          /^device iPhone 16 A is restarting after a crash; back in about \d+ s$/,
        ) as unknown,
      },
    });

    driver.release();
    const after = await leaseWhere('DeviceRecovered', recovered);
    expect(after).toMatchObject({
      phase: 'Granted',
      conditions: [
        {
          status: 'False',
          reason: 'DeviceRecovered',
          message: expect.stringMatching(/^booted again after \d+ s$/) as unknown,
        },
      ],
    });
    expect(await exec()).toMatchObject({
      status: 200,
      body: expect.stringContaining('event: exit') as unknown,
    });
  });

  it('ends the lease Lost and quarantines the device at its third crash in ten minutes', async () => {
    driver.hold();
    driver.crash(DEVICE);
    await leaseWhere('the second recovery', recovering);
    driver.release();
    await leaseWhere('the second recovery done', recovered);

    driver.crash(DEVICE);
    const lost = await leaseWhere('Lost', (status) => status?.phase === 'Lost');
    expect(lost.message).toBe(
      'the device iPhone 16 A crashed 3 times in 10 minutes; it is quarantined and the lease is lost',
    );
    expect(lost.recovery).toBeUndefined();
    expect(core.status().devices).toEqual([
      expect.objectContaining({ id: DEVICE, state: 'quarantined' }),
    ]);
    expect(core.inventory.quarantineOf(DEVICE)?.reason).toBe('crashed 3 times in 10 minutes');
    expect((await exec()).status).toBe(409);
    // What an operator's alert reads: three crashes, two recoveries, one lease lost, one quarantined.
    expect(await series('simlock_agent_device_recoveries_total')).toEqual({
      crashed: 2,
      recovered: 2,
      lost: 1,
    });
    expect((await series('simlock_agent_devices')).quarantined).toBe(1);

    // Deleted (as the controller does once it read Lost): the agent lets it go, reclaiming nothing.
    await cluster.admin.delete(simlockPath('lease', { namespace: leaseNamespace, name: LEASE }));
    await eventually(async () => ((await lease()) === undefined ? true : undefined), {
      what: 'the Lease gone',
    });
    expect(core.inventory.quarantineOf(DEVICE)).toBeDefined();
  });
});
