// Idle devices and disk, on an injected clock: a booted device nobody leases shuts down after
// idle.shutdownAfterSeconds (the warm number per model stays up), a device the agent made and
// nobody used is deleted after idle.deleteAfterSeconds, and while disk space is low nothing is made,
// the refusal says why, and the idle devices the agent made are deleted first.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/fake-clock.js';
import { anAgentConfig } from '../test/fixtures/agent-config.js';
import { aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { type AgentConfigInput } from './config.js';
import { AgentCore } from './core.js';
import { FakeDriver } from './drivers/fake/fake.js';
import type { FakeScriptInput } from './drivers/fake/fake-script.js';

const GIB = 1024 ** 3;
const REFRESH_MS = 15_000;

async function startAgent(
  script: FakeScriptInput,
  config: Partial<AgentConfigInput> = {},
  freeGiB: { value: number } = { value: 100 },
) {
  const clock = new FakeClock();
  const driver = new FakeDriver({ bootMs: 1000, provisionMs: 1000, ...script }, { clock });
  const core = new AgentCore({
    config: anAgentConfig({
      name: 'mac-1',
      refreshIntervalMs: REFRESH_MS,
      limits: { running: 4 },
      idle: { shutdownAfterSeconds: 600, deleteAfterSeconds: 3600 },
      ...config,
    }),
    driver,
    clock,
    dataDir: '/srv/simlock-agent',
    readFreeBytes: () => Promise.resolve(freeGiB.value * GIB),
  });
  await core.start();
  const stateOf = (id: string) => core.status().devices.find((device) => device.id === id)?.state;
  return { clock, driver, core, stateOf };
}

const makesIphone17: FakeScriptInput = {
  makeable: [{ platform: 'ios', model: 'iPhone 17', os: ['18.4'] }],
};

describe('idle devices', () => {
  it('shuts down a booted device nobody leases after shutdownAfter, keeping the warm ones', async () => {
    const { clock, core, driver, stateOf } = await startAgent(
      {
        devices: [
          aScriptedSimulator('a', { booted: true }),
          aScriptedSimulator('b', { booted: true }),
          aScriptedSimulator('pro', { booted: true, model: 'iPhone 16 Pro' }),
        ],
      },
      { idle: { shutdownAfterSeconds: 600, warm: { 'iphone 16': 1 } } },
    );
    await clock.advance(590_000);
    expect([stateOf('a'), stateOf('b'), stateOf('pro')]).toEqual(['ready', 'ready', 'ready']);
    await clock.advance(REFRESH_MS);
    await core.sweepIdle();
    // One iPhone 16 stays warm; the other and the iPhone 16 Pro are shut down (no longer listed).
    const shutDown = driver.operations.filter((operation) => operation.operation === 'shutdown');
    expect(shutDown.map((operation) => operation.deviceId).sort()).toEqual(['a', 'pro']);
    expect([stateOf('a'), stateOf('b'), stateOf('pro')]).toEqual([undefined, 'ready', undefined]);
    core.stop();
  });

  it('never shuts down a leased device, however long it is held', async () => {
    const { clock, core, driver } = await startAgent({
      devices: [aScriptedSimulator('a', { booted: true })],
    });
    await core.grant('lease-1', { platform: 'ios' });
    await clock.advance(3_600_000);
    await core.sweepIdle();
    expect(driver.operations.map((operation) => operation.operation)).toEqual([]);
    core.stop();
  });

  it('deletes a device it made, unused for deleteAfter; never one it did not make', async () => {
    const { clock, core, driver } = await startAgent({
      ...makesIphone17,
      devices: [aScriptedSimulator('mine-not')],
    });
    const granting = core.grant('lease-1', { platform: 'ios', model: 'iPhone 17' });
    await clock.advance(2000);
    const outcome = await granting;
    const made = outcome.kind === 'granted' ? outcome.lease.device.id : '';
    const reclaiming = core.reclaim('lease-1'); // erased and booted again: warm
    await clock.advance(1000);
    await reclaiming;
    await clock.advance(600_000 + REFRESH_MS); // shut down when idle
    await core.sweepIdle();
    await clock.advance(3_600_000 + REFRESH_MS); // deleted when unused
    await core.sweepIdle();
    const deleted = driver.operations.filter((operation) => operation.operation === 'delete');
    expect(deleted.map((operation) => operation.deviceId)).toEqual([made]);
    const listed = (await driver.listDevices()).devices.map((device) => device.id);
    expect(listed).toEqual(['mine-not']);
    core.stop();
  });
});

describe('disk space', () => {
  it('while low: makes nothing (disk-low), says so in the view, deletes its idle devices', async () => {
    const free = { value: 100 };
    const { clock, core, driver } = await startAgent({ ...makesIphone17 }, {}, free);
    const granting = core.grant('lease-1', { platform: 'ios', model: 'iPhone 17' });
    await clock.advance(2000);
    await granting;
    const reclaiming = core.reclaim('lease-1');
    await clock.advance(1000);
    await reclaiming;
    expect(core.status().disk).toEqual({ freeGiB: 100, lowBelowGiB: 10, low: false });

    free.value = 3;
    await core.refresh();
    expect(core.status().disk).toEqual({ freeGiB: 3, lowBelowGiB: 10, low: true });
    // The made device is warm (ready): it is not deleted while up; a new one is not made.
    expect(await core.grant('lease-2', { platform: 'ios', model: 'iPhone 17' })).toMatchObject({
      kind: 'granted',
    });
    expect(await core.grant('lease-3', { platform: 'ios', model: 'iPhone 17' })).toMatchObject({
      kind: 'refused',
      refusal: { code: 'NO_CAPACITY', capacityReason: 'disk-low' },
    });
    const reclaimingAgain = core.reclaim('lease-2');
    await clock.advance(1000);
    await reclaimingAgain;
    await clock.advance(600_000 + REFRESH_MS);
    await core.sweepIdle();
    // Shut down when idle, then deleted at once: disk is low.
    await core.sweepIdle();
    expect(driver.operations.filter((operation) => operation.operation === 'delete')).toHaveLength(
      1,
    );
    core.stop();
  });
});
