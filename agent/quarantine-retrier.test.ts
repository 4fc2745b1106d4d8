// Quarantine retries on an injected clock, through the core with the fake driver: a device that
// fails its retries' boots twice and then passes is back in the pool; one that fails them all is
// deleted if the agent made it and waits for an operator if not; an operator's unquarantine puts
// it back; and a retry never gives a grant the device it is booting.
import { describe, expect, it } from 'vitest';
import { sleep } from '../runtime/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { anAgentConfig } from '../test/fixtures/agent-config.js';
import { aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { type AgentConfigInput } from './config.js';
import { AgentCore } from './core.js';
import { DriverError, type DriverDevice } from './drivers/driver.js';
import { FakeDriver } from './drivers/fake/fake.js';
import type { FakeScriptInput } from './drivers/fake/fake-script.js';

const BOOT_MS = 1000;
const MINUTE = 60_000;

/** The fake driver whose next `failures` boots fail (the first one is the grant's). */
class FlakyBootDriver extends FakeDriver {
  bootFailuresLeft = 0;
  /** A failing boot fails after this long on `clock` (by default at once). */
  failAfter: { clock: FakeClock; ms: number } | undefined;
  checks: string[] = [];

  override async boot(device: DriverDevice): Promise<void> {
    if (this.bootFailuresLeft > 0) {
      this.bootFailuresLeft -= 1;
      if (this.failAfter) await sleep(this.failAfter.clock, this.failAfter.ms);
      this.operations.push({ operation: 'boot', deviceId: device.id });
      throw new DriverError(`fake: boot of ${device.id} timed out`);
    }
    await super.boot(device);
  }

  override checkDevice(device: DriverDevice): Promise<void> {
    this.checks.push(device.id);
    return Promise.resolve();
  }
}

async function startAgent(
  script: FakeScriptInput,
  bootFailures: number,
  config: Partial<AgentConfigInput> = {},
) {
  const clock = new FakeClock();
  const driver = new FlakyBootDriver({ bootMs: BOOT_MS, provisionMs: 1000, ...script }, { clock });
  driver.bootFailuresLeft = bootFailures;
  const core = new AgentCore({
    config: anAgentConfig({
      name: 'mac-1',
      refreshIntervalMs: 3_600_000,
      limits: { running: 4 },
      ...config,
    }),
    driver,
    clock,
  });
  await core.start();
  const device = (id: string) => core.status().devices.find((entry) => entry.id === id);
  return { clock, driver, core, device };
}

const iphone16 = { platform: 'ios', model: 'iPhone 16' } as const;
const iso = (ms: number) => new Date(ms).toISOString();

/** A grant whose boot fails quarantines the device; answers when (the quarantine's since). */
async function quarantineByGrant(
  agent: Awaited<ReturnType<typeof startAgent>>,
  spec: { platform: 'ios'; model: string } = iphone16,
): Promise<number> {
  const granting = agent.core.grant('lease-1', spec);
  await agent.clock.advance(5000);
  expect(await granting).toMatchObject({ kind: 'refused' });
  const quarantined = agent.core.status().devices.find((entry) => entry.quarantine);
  return Date.parse(quarantined?.quarantine?.since ?? '');
}

/**
 * A reclaim whose erase failed, as the machine writes it (reclaiming --reclaimFailed-->
 * quarantined): the device is quarantined now, its retries per the policy.
 */
function quarantineAfterReclaim(core: AgentCore, id: string): void {
  core.steps.write(id, { kind: 'quarantined', owned: false }, 'reclaim failed: erase timed out');
}

describe('quarantine retries', () => {
  it('puts back in the pool a device whose retries fail twice and then pass', async () => {
    const agent = await startAgent({ devices: [aScriptedSimulator('a')] }, 3);
    const { clock, core, driver, device } = agent;
    const since = await quarantineByGrant(agent);
    expect(device('a')).toMatchObject({
      state: 'quarantined',
      quarantine: { since: iso(since), retries: 0, nextRetryAt: iso(since + MINUTE) },
    });

    await clock.advance(MINUTE);
    await core.quarantines.idle();
    expect(device('a')).toMatchObject({
      state: 'quarantined',
      quarantine: {
        since: iso(since),
        retries: 1,
        reason: 'boot failed: fake: boot of a timed out; retry 1 failed: fake: boot of a timed out',
      },
    });
    // The stand-in's boot fails at once: the retry failed when it fell due, a minute in.
    expect(device('a')?.quarantine?.nextRetryAt).toBe(iso(since + MINUTE + 5 * MINUTE));

    await clock.advance(5 * MINUTE);
    await core.quarantines.idle();
    expect(device('a')?.quarantine).toMatchObject({ retries: 2 });

    await clock.advance(30 * MINUTE);
    await core.quarantines.idle();
    expect(device('a')).toMatchObject({ state: 'ready' });
    expect(device('a')?.quarantine).toBeUndefined();
    // The boot alone was not the test: the driver's per-device check ran after it.
    expect(driver.checks).toEqual(['a']);
    // Back in the pool: the next grant takes it, warm.
    expect(await core.grant('lease-2', iphone16)).toMatchObject({
      kind: 'granted',
      lease: { device: { id: 'a' }, source: 'warm' },
    });
    core.stop();
  });

  it('deletes a device it made once its retries are used up (a new one is made on demand)', async () => {
    const agent = await startAgent(
      { makeable: [{ platform: 'ios', model: 'iPhone 17', os: ['18.4'] }], devices: [] },
      4,
    );
    const { clock, core, driver } = agent;
    await quarantineByGrant(agent, { platform: 'ios', model: 'iPhone 17' });
    const made = core.status().devices.find((entry) => entry.state === 'quarantined');
    expect(made).toBeDefined();
    await clock.advance(MINUTE + 5 * MINUTE + 30 * MINUTE + 10 * BOOT_MS);
    await core.quarantines.idle();
    expect(driver.operations.filter((op) => op.operation === 'delete')).toEqual([
      { operation: 'delete', deviceId: made?.id },
    ]);
    expect(core.status().devices).toEqual([]);
    // The planner makes a new one when a request needs it.
    const granting = core.grant('lease-2', { platform: 'ios', model: 'iPhone 17' });
    await clock.advance(5000);
    expect(await granting).toMatchObject({ kind: 'granted', lease: { source: 'cold' } });
    core.stop();
  });

  it('keeps an adopted device quarantined for an operator once its retries are used up', async () => {
    const agent = await startAgent({ devices: [aScriptedSimulator('a')] }, 3, {
      quarantine: { retryBackoffSeconds: [60, 300] },
    });
    const { clock, core, driver, device } = agent;
    const since = await quarantineByGrant(agent);
    await clock.advance(MINUTE + 5 * MINUTE + 10 * BOOT_MS);
    await core.quarantines.idle();
    expect(device('a')).toMatchObject({
      state: 'quarantined',
      quarantine: { since: iso(since), retries: 2 },
    });
    expect(device('a')?.quarantine?.nextRetryAt).toBeUndefined();
    const boots = driver.operations.filter((op) => op.operation === 'boot').length;
    await clock.advance(24 * 60 * MINUTE);
    expect(driver.operations.filter((op) => op.operation === 'boot')).toHaveLength(boots);
    expect(driver.operations.some((op) => op.operation === 'delete')).toBe(false);

    // A request older than the quarantine ends nothing; the operator's request does.
    expect(await core.unquarantine('a', since - 1)).toBe('not-quarantined');
    expect(await core.unquarantine('a', clock.now())).toBe('ended');
    expect(device('a')?.quarantine).toBeUndefined();
    const granting = core.grant('lease-2', iphone16);
    await clock.advance(BOOT_MS);
    expect(await granting).toMatchObject({
      kind: 'granted',
      lease: { device: { id: 'a' }, source: 'cold' },
    });
    core.stop();
  });

  it('never lets a grant take the device a retry is booting, and counts its slot', async () => {
    const agent = await startAgent(
      { devices: [aScriptedSimulator('a'), aScriptedSimulator('b')] },
      1,
      {
        limits: { running: 1 },
      },
    );
    const { clock, core, device } = agent;
    await quarantineByGrant(agent);
    const retryAt = Date.parse(device('a')?.quarantine?.nextRetryAt ?? '');
    await clock.advance(retryAt - clock.now());
    // The retry is booting 'a': the view says quarantined, and the one slot is taken.
    expect(device('a')?.state).toBe('quarantined');
    expect(core.status().capacity?.global.running).toBe(1);
    const during = core.grant('lease-2', iphone16);
    expect(await during).toMatchObject({
      kind: 'refused',
      refusal: { code: 'NO_CAPACITY', capacityReason: 'platform-running-limit' },
    });
    await clock.advance(BOOT_MS);
    await core.quarantines.idle();
    expect(device('a')?.state).toBe('ready');
    expect(await core.grant('lease-3', iphone16)).toMatchObject({
      kind: 'granted',
      lease: { device: { id: 'a' }, source: 'warm' },
    });
    core.stop();
  });

  it('puts a retry off while no running slot is free, without counting it', async () => {
    const agent = await startAgent(
      { devices: [aScriptedSimulator('a'), aScriptedSimulator('busy', { booted: true })] },
      0,
      {
        limits: { running: 1 },
        reclaim: 'shutdown',
      },
    );
    const { clock, core, driver, device } = agent;
    expect(await core.grant('lease-busy', iphone16)).toMatchObject({ kind: 'granted' });
    quarantineAfterReclaim(core, 'a');
    await clock.advance(MINUTE);
    await core.quarantines.idle();
    // No slot: not booted, not counted, put off.
    expect(driver.operations.some((op) => op.operation === 'boot')).toBe(false);
    expect(device('a')?.quarantine).toMatchObject({
      retries: 0,
      nextRetryAt: iso(clock.now() + MINUTE),
    });
    await core.reclaim('lease-busy');
    await clock.advance(MINUTE + BOOT_MS);
    await core.quarantines.idle();
    expect(device('a')).toMatchObject({ state: 'ready' });
    core.stop();
  });

  it('ends the quarantine an operator asked to end during a retry, once the retry fails', async () => {
    const agent = await startAgent({ devices: [aScriptedSimulator('a')] }, 2);
    const { clock, core, driver, device } = agent;
    await quarantineByGrant(agent);
    driver.failAfter = { clock, ms: BOOT_MS };
    await clock.advance(Date.parse(device('a')?.quarantine?.nextRetryAt ?? '') - clock.now());
    // The retry is booting: the request waits for it.
    expect(await core.unquarantine('a', clock.now())).toBe('after-retry');
    expect(device('a')?.state).toBe('quarantined');
    await clock.advance(BOOT_MS);
    await core.quarantines.idle();
    expect(device('a')?.quarantine).toBeUndefined();
    const granting = core.grant('lease-2', iphone16);
    await clock.advance(BOOT_MS);
    expect(await granting).toMatchObject({ kind: 'granted', lease: { device: { id: 'a' } } });
    core.stop();
  });

  it('shuts a running quarantined device down when an operator ends its quarantine', async () => {
    const agent = await startAgent({ devices: [aScriptedSimulator('a', { booted: true })] }, 0);
    const { clock, core, driver, device } = agent;
    quarantineAfterReclaim(core, 'a');
    await clock.advance(1);
    expect(await core.unquarantine('a', clock.now())).toBe('ended');
    expect(driver.operations).toEqual([{ operation: 'shutdown', deviceId: 'a' }]);
    // Shut down and free: no longer listed in the view, free for a cold grant.
    expect(device('a')).toBeUndefined();
    core.stop();
  });
});
