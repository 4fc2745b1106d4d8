// Crash recovery on an injected clock, through the whole core with the fake driver: a leased
// device that stops is booted again under the same lease and the holder told; past the crash
// budget, or when it will not boot again, the lease is lost and the device quarantined.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/fake-clock.js';
import { anAgentConfig } from '../test/fixtures/agent-config.js';
import { aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { AgentCore } from './core.js';
import { DriverError } from './drivers/driver.js';
import { FakeDriver } from './drivers/fake/fake.js';
import type { FakeScriptInput } from './drivers/fake/fake-script.js';

const BOOT_MS = 2000;
const PROBE_MS = 5000;
const REFRESH_MS = 15_000;

async function startAgent(script: FakeScriptInput) {
  const clock = new FakeClock();
  const driver = new FakeDriver({ bootMs: BOOT_MS, ...script }, { clock });
  const core = new AgentCore({
    config: anAgentConfig({
      endpoint: 'https://worker-a.example:8780',
      probeIntervalMs: PROBE_MS,
      refreshIntervalMs: REFRESH_MS,
      healthIntervalMs: 60_000,
      limits: { running: 4 },
      reclaim: 'erase-keep-warm',
    }),
    driver,
    clock,
    machine: { cores: 10, memoryMb: 32 * 1024 },
  });
  await core.start();
  const granted = await core.grant('lease-1', { platform: 'ios' });
  expect(granted).toMatchObject({ kind: 'granted', lease: { device: { id: 'sim' } } });
  const news: string[] = [];
  core.recovery.news.add(({ leaseId }) => {
    const health = core.recovery.healthOf(leaseId);
    news.push(health?.lost ? 'lost' : (health?.condition?.reason ?? 'none'));
  });
  return { clock, driver, core, news };
}

/** The leased device of every test here, running from the start. */
const sim = aScriptedSimulator('sim', { name: 'iPhone 16 A', booted: true });

/** Kills the device and lets the next listing see it. */
async function crash(clock: FakeClock, driver: FakeDriver, core: AgentCore): Promise<void> {
  driver.crash('sim');
  await core.refresh();
  await clock.advance(0);
}

describe('a leased device that crashes', () => {
  it('is booted again under the same lease, the holder told recovering then recovered', async () => {
    const { clock, driver, core, news } = await startAgent({ devices: [sim] });
    await clock.advance(10_000);
    await crash(clock, driver, core);

    expect(core.recovery.recovering('lease-1')).toBe(true);
    expect(core.recovery.healthOf('lease-1')).toEqual({
      recovery: {
        since: new Date(clock.now()).toISOString(),
        cause: 'shut down',
        crashes: 1,
        crashBudget: 3,
        estimatedSeconds: 30,
      },
      condition: expect.objectContaining({
        type: 'DeviceRecovering',
        status: 'True',
        reason: 'DeviceCrashed',
        message: 'the device stopped (shut down); booting it again, back in about 30 s',
      }) as unknown,
    });
    expect(core.execArgv('lease-1', 'simctl', ['listapps'])).toEqual({
      ok: false,
      code: 'UNAVAILABLE',
      message: 'device iPhone 16 A is restarting after a crash; back in about 30 s',
    });
    // The view keeps it leased: no grant and no idle sweep can take it.
    expect(core.status().devices).toEqual([
      expect.objectContaining({ id: 'sim', state: 'leased' }),
    ]);

    await clock.advance(BOOT_MS);
    expect(core.recovery.recovering('lease-1')).toBe(false);
    expect(core.recovery.healthOf('lease-1')).toEqual({
      recovery: null,
      condition: expect.objectContaining({
        status: 'False',
        reason: 'DeviceRecovered',
        message: 'booted again after 2 s',
      }) as unknown,
    });
    expect(news).toEqual(['DeviceCrashed', 'DeviceRecovered']);
    expect(core.granter.lease('lease-1')).toBeDefined();
    expect(core.execArgv('lease-1', 'simctl', ['listapps'])).toMatchObject({ ok: true });
    expect(driver.operations.slice(-2)).toEqual([
      { operation: 'shutdown', deviceId: 'sim' },
      { operation: 'boot', deviceId: 'sim' },
    ]);
    // Booted again, the next listing sees nothing wrong.
    await clock.advance(REFRESH_MS);
    expect(news).toHaveLength(2);
    core.stop();
  });

  it('counts a failed check on the probe interval as a crash', async () => {
    const { clock, driver, core } = await startAgent({ devices: [sim] });
    driver.setCheckFails('sim', true);
    await clock.advance(PROBE_MS);
    expect(core.recovery.healthOf('lease-1')?.recovery).toMatchObject({
      cause: 'health check failed: fake: sim does not answer (scripted)',
      crashes: 1,
    });
    driver.setCheckFails('sim', false);
    await clock.advance(BOOT_MS);
    expect(core.recovery.healthOf('lease-1')?.condition?.reason).toBe('DeviceRecovered');
    core.stop();
  });

  it('does not count a check that failed on the device before its crash once it is back', async () => {
    // An emulator killed while the probe's `adb getprop` to it is under way: the listing sees its
    // process gone (crash 1) and it is booted again before that check's "device not found" comes
    // back (seen on a loaded machine). That answer was the old emulator's: no second crash.
    const { clock, driver, core, news } = await startAgent({ devices: [sim] });
    let fail: (error: Error) => void = () => undefined;
    driver.checkDevice = () => new Promise<void>((_resolve, reject) => (fail = reject));
    await clock.advance(PROBE_MS);
    await crash(clock, driver, core);
    await clock.advance(BOOT_MS);
    expect(news).toEqual(['DeviceCrashed', 'DeviceRecovered']);

    fail(new DriverError("adb: device 'emulator-5600' not found"));
    await clock.advance(0);
    expect(news).toEqual(['DeviceCrashed', 'DeviceRecovered']);
    expect(core.recovery.recovering('lease-1')).toBe(false);
    expect(driver.operations.filter((each) => each.operation === 'boot')).toHaveLength(1);
    core.stop();
  });

  it('stops the execs running on it with UNAVAILABLE, the lease going on', async () => {
    const { clock, driver, core } = await startAgent({ devices: [sim] });
    const exec = core.execs.track('lease-1');
    await crash(clock, driver, core);
    await clock.advance(10);
    expect(exec.leaseEnded.aborted).toBe(true);
    expect(exec.leaseEnded.reason).toEqual({
      code: 'UNAVAILABLE',
      message: 'device iPhone 16 A crashed; it is being booted again',
    });
    exec.exited();
    core.stop();
  });

  it('ends the lease LEASE_LOST and quarantines the device at its third crash in ten minutes', async () => {
    const { clock, driver, core, news } = await startAgent({ devices: [sim] });
    for (let crashes = 1; crashes <= 2; crashes++) {
      await crash(clock, driver, core);
      await clock.advance(BOOT_MS);
      expect(core.recovery.healthOf('lease-1')?.condition?.reason).toBe('DeviceRecovered');
      await clock.advance(60_000);
    }
    await crash(clock, driver, core);
    await clock.advance(10);
    const lost =
      'the device iPhone 16 A crashed 3 times in 10 minutes; it is quarantined and the lease is lost';
    expect(core.recovery.healthOf('lease-1')).toEqual({
      recovery: null,
      condition: expect.objectContaining({
        status: 'False',
        reason: 'DeviceCrashed',
        message: lost,
      }) as unknown,
      lost,
    });
    expect(news.at(-1)).toBe('lost');
    // Quarantined like any other: retried after the first backoff (a minute by default).
    const quarantine = core.inventory.quarantineOf('sim');
    expect(quarantine).toEqual({
      reason: 'crashed 3 times in 10 minutes',
      sinceMs: expect.any(Number) as number,
      retries: 0,
      nextRetryAtMs: (quarantine?.sinceMs ?? 0) + 60_000,
    });
    expect(core.execArgv('lease-1', 'simctl', ['listapps'])).toMatchObject({
      ok: false,
      code: 'LEASE_NOT_ACTIVE',
    });
    // The Lease deleted later: nothing to reclaim, the device stays quarantined.
    expect(await core.reclaim('lease-1')).toBe('not-leased');
    expect(core.status().devices).toEqual([
      expect.objectContaining({ id: 'sim', state: 'quarantined' }),
    ]);
    core.stop();
  });

  it('recovers again when its earlier crashes fall out of the ten-minute window', async () => {
    const { clock, driver, core } = await startAgent({ devices: [sim] });
    for (let crashes = 0; crashes < 3; crashes++) {
      await crash(clock, driver, core);
      await clock.advance(BOOT_MS);
      await clock.advance(6 * 60_000);
    }
    expect(core.recovery.healthOf('lease-1')).toMatchObject({
      recovery: null,
      condition: { reason: 'DeviceRecovered' },
    });
    expect(core.granter.lease('lease-1')).toBeDefined();
    core.stop();
  });

  it('ends the lease and quarantines the device when it will not boot again', async () => {
    const { clock, driver, core } = await startAgent({
      devices: [sim],
      failures: { boot: ['sim'] },
    });
    await crash(clock, driver, core);
    await clock.advance(BOOT_MS);
    expect(core.recovery.healthOf('lease-1')?.lost).toBe(
      'the device iPhone 16 A would not boot again after a crash: fake: boot of sim fails (scripted); it is quarantined and the lease is lost',
    );
    expect(core.inventory.quarantineOf('sim')?.reason).toBe(
      'would not boot again after a crash: fake: boot of sim fails (scripted)',
    );
    expect(core.granter.lease('lease-1')).toBeUndefined();
    core.stop();
  });

  it('is reclaimed once its recovery boot settles when the lease ends meanwhile', async () => {
    const { clock, driver, core } = await startAgent({ devices: [sim] });
    await crash(clock, driver, core);
    const released = core.reclaim('lease-1');
    await clock.advance(BOOT_MS); // the recovery's boot
    await clock.advance(BOOT_MS); // erase-keep-warm's boot
    expect(await released).toBe('ready');
    expect(core.recovery.healthOf('lease-1')).toBeUndefined();
    core.stop();
  });

  it('loses the lease of a device the tools no longer list, its tools stopped', async () => {
    const { driver, core, news } = await startAgent({ devices: [sim] });
    driver.removeDevice('sim');
    await core.refresh();
    await core.recovery.settled('lease-1');
    expect(news).toEqual(['lost']);
    expect(core.recovery.healthOf('lease-1')?.lost).toBe(
      'the device iPhone 16 A is gone from the host; the lease is lost',
    );
    expect(core.granter.lease('lease-1')).toBeUndefined();
    expect(core.execArgv('lease-1', 'simctl', ['listapps'])).toMatchObject({
      ok: false,
      code: 'LEASE_NOT_ACTIVE',
    });
    expect(await core.reclaim('lease-1')).toBe('not-leased');
    core.stop();
  });
});
