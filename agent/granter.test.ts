import { describe, expect, it } from 'vitest';
import type { DeviceSpec } from '../api/index.js';
import { aGranter } from '../test/agent-granter.js';
import { aScriptedPhone, aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { grantedIphone } from '../test/fixtures/objects.js';
import type { AgentConfigInput, ReclaimPolicy } from './config.js';
import type { FakeScriptInput } from './drivers/fake/fake-script.js';
import type { GrantOutcome } from './granter.js';

const UDID = '00008110-001A2B3C4D5E';
const BOOT_MS = 3000;

async function setUp(
  script: FakeScriptInput,
  options: {
    limits?: AgentConfigInput['limits'];
    reclaim?: ReclaimPolicy;
    localWaiting?: DeviceSpec[];
    stopExecs?: (leaseId: string) => Promise<void>;
  } = {},
) {
  const parts = await aGranter(
    { bootMs: BOOT_MS, ...script },
    { ...options, localWaiting: () => options.localWaiting ?? [] },
  );
  const { inventory, presence } = parts;
  const stateOf = (id: string) =>
    inventory.devices((deviceId) => presence.latest(deviceId)).find((device) => device.id === id);
  return { ...parts, stateOf };
}

const iphone16: DeviceSpec = { platform: 'ios', model: 'iPhone 16' };
const iphone = aScriptedPhone(UDID);

function grantedId(outcome: GrantOutcome): string | undefined {
  return outcome.kind === 'granted' ? outcome.lease.device.id : undefined;
}

describe('granting virtual leases', () => {
  it('grants a warm simulator at once and marks it leased', async () => {
    const { granter, stateOf } = await setUp({
      devices: [aScriptedSimulator('a', { booted: true })],
    });
    const outcome = await granter.grant('lease-1', iphone16);
    expect(outcome).toMatchObject({
      kind: 'granted',
      lease: { source: 'warm', device: { id: 'a' } },
    });
    expect(stateOf('a')?.state).toBe('leased');
  });

  it('cold-boots: the device is booting until the boot ends, then leased, source cold', async () => {
    const { granter, clock, stateOf } = await setUp({ devices: [aScriptedSimulator('a')] });
    const pending = granter.grant('lease-1', iphone16);
    await clock.advance(BOOT_MS - 1);
    expect(stateOf('a')?.state).toBe('booting');
    await clock.advance(1);
    expect(await pending).toMatchObject({ kind: 'granted', lease: { source: 'cold' } });
    expect(stateOf('a')?.state).toBe('leased');
  });

  it('evicts an idle warm simulator of another model before a cold boot', async () => {
    const { granter, clock, driver, stateOf } = await setUp(
      {
        devices: [
          aScriptedSimulator('warm-15', { booted: true, model: 'iPhone 15' }),
          aScriptedSimulator('b'),
        ],
      },
      { limits: { running: 4, platforms: { ios: { running: 1 } } } },
    );
    const pending = granter.grant('lease-1', iphone16);
    await clock.advance(BOOT_MS);
    expect(await pending).toMatchObject({
      kind: 'granted',
      lease: { source: 'cold', device: { id: 'b' } },
    });
    expect(driver.operations.slice(0, 2)).toEqual([
      { operation: 'shutdown', deviceId: 'warm-15' },
      { operation: 'boot', deviceId: 'b' },
    ]);
    expect(stateOf('warm-15')?.state).toBe('shutdown');
  });

  it('quarantines a simulator whose boot fails and refuses NO_CAPACITY', async () => {
    const { granter, clock, stateOf } = await setUp({
      devices: [aScriptedSimulator('a')],
      failures: { boot: ['a'] },
    });
    const pending = granter.grant('lease-1', iphone16);
    await clock.advance(BOOT_MS);
    expect(await pending).toMatchObject({ kind: 'refused', refusal: { code: 'NO_CAPACITY' } });
    expect(stateOf('a')?.state).toBe('quarantined');
    // Why and since when, for the view and `kubectl simlock device list`.
    expect(stateOf('a')?.quarantinedFor).toEqual({
      reason: 'boot failed: fake: boot of a fails (scripted)',
      sinceMs: clock.now(),
      retries: 0,
    });
  });

  it('answers a lease delivered twice with the same grant', async () => {
    const { granter } = await setUp({
      devices: [
        aScriptedSimulator('a', { booted: true }),
        aScriptedSimulator('b', { booted: true }),
      ],
    });
    const [first, second] = await Promise.all([
      granter.grant('lease-1', iphone16),
      granter.grant('lease-1', iphone16),
    ]);
    expect(grantedId(first)).toBe(grantedId(second));
    expect(grantedId(await granter.grant('lease-1', iphone16))).toBe(grantedId(first));
  });

  it('refuses a fleet lease while a local request for the platform waits', async () => {
    const { granter } = await setUp(
      { devices: [aScriptedSimulator('a', { booted: true })] },
      { localWaiting: [{ platform: 'ios' }] },
    );
    expect(await granter.grant('fleet-1', iphone16)).toMatchObject({
      kind: 'refused',
      refusal: { code: 'NO_CAPACITY' },
    });
    expect(await granter.grant('local-1', iphone16, 'local')).toMatchObject({ kind: 'granted' });
  });
});

describe('leases that arrive together', () => {
  it('never give one warm simulator to two leases', async () => {
    const { granter } = await setUp({ devices: [aScriptedSimulator('only', { booted: true })] });
    const outcomes = await Promise.all([
      granter.grant('lease-1', iphone16),
      granter.grant('lease-2', iphone16),
    ]);
    expect(outcomes.map((outcome) => outcome.kind).sort()).toEqual(['granted', 'refused']);
  });

  it('give distinct devices to many leases at once, warm and cold, up to the limits', async () => {
    const { granter, clock } = await setUp(
      {
        devices: [
          aScriptedSimulator('a', { booted: true }),
          aScriptedSimulator('b'),
          aScriptedSimulator('c'),
          aScriptedSimulator('d', { booted: true }),
        ],
      },
      { limits: { running: 3 } },
    );
    const pending = Promise.all(
      Array.from({ length: 6 }, (_, index) => granter.grant(`lease-${index}`, iphone16)),
    );
    await clock.advance(BOOT_MS);
    const ids = (await pending).map(grantedId).filter((id) => id !== undefined);
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
  });

  it('never give one phone to two physical leases', async () => {
    const { granter } = await setUp({ devices: [iphone] });
    const outcomes = await Promise.all([
      granter.grant('lease-1', { platform: 'ios', physical: true }),
      granter.grant('lease-2', { platform: 'ios', physical: true }),
      granter.grant('lease-3', { platform: 'ios', physical: true }),
    ]);
    expect(outcomes.filter((outcome) => outcome.kind === 'granted')).toHaveLength(1);
  });
});

describe('granting physical leases', () => {
  const spec: DeviceSpec = { platform: 'ios', physical: true };

  it('reads presence at grant time and grants a present phone, taking a reset baseline', async () => {
    const { granter, driver, presence } = await setUp({ devices: [iphone] });
    expect(await granter.grant('lease-1', spec)).toMatchObject({
      kind: 'granted',
      lease: { source: 'warm', device: { id: UDID, physical: true } },
    });
    expect(presence.latest(UDID)).toEqual({ present: true });
    expect(driver.operations).toEqual([{ operation: 'readResetBaseline', deviceId: UDID }]);
  });

  it('refuses NO_CAPACITY device-not-present when the phone reads not present, and the read reaches the view', async () => {
    const { granter, driver, presence, stateOf } = await setUp({ devices: [iphone] });
    driver.setPresence(UDID, { present: false, reason: 'locked' });
    expect(await granter.grant('lease-1', spec)).toEqual({
      kind: 'refused',
      refusal: {
        code: 'NO_CAPACITY',
        capacityReason: 'device-not-present',
        message: 'the matching device was read not present at grant',
      },
    });
    expect(presence.latest(UDID)).toEqual({ present: false, reason: 'locked' });
    expect(stateOf(UDID)).toMatchObject({
      state: 'ready',
      presence: { present: false, reason: 'locked' },
    });
  });

  it('answers UNKNOWN_MODEL when nothing enrolled can match', async () => {
    const { granter } = await setUp({ devices: [iphone] });
    expect(
      await granter.grant('lease-1', { platform: 'ios', physical: true, class: 'tablet' }),
    ).toMatchObject({
      refusal: {
        code: 'UNKNOWN_MODEL',
        message: 'no enrolled physical device can match ios class tablet',
      },
    });
  });

  it('aims exec at the leased phone, and refuses exec on a lease it does not hold', async () => {
    const { granter } = await setUp({ devices: [iphone] });
    await granter.grant('lease-1', spec);
    const plan = granter.execArgv('lease-1', 'devicectl', ['device', 'info', 'apps']);
    expect(plan.ok && plan.argv.slice(-6)).toEqual([
      'devicectl',
      'device',
      'info',
      'apps',
      '--device',
      UDID,
    ]);
    expect(granter.execArgv('lease-1', 'simctl', ['launch', 'x'])).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    expect(granter.execArgv('lease-2', 'devicectl', [])).toMatchObject({
      ok: false,
      code: 'LEASE_NOT_ACTIVE',
    });
  });
});

describe('release', () => {
  it('erases a simulator and boots it again warm (erase-keep-warm)', async () => {
    const { granter, clock, driver, stateOf } = await setUp({
      devices: [aScriptedSimulator('a', { booted: true })],
    });
    await granter.grant('lease-1', iphone16);
    const released = granter.reclaim('lease-1');
    expect(stateOf('a')?.state).toBe('reclaiming');
    await clock.advance(BOOT_MS);
    expect(await released).toBe('ready');
    expect(driver.operations.map((entry) => entry.operation)).toEqual(['erase', 'boot']);
    expect(stateOf('a')?.state).toBe('ready');
  });

  it('stops the lease’s tools first, and erases only once they are gone', async () => {
    let toolsGone = (): void => undefined;
    const stopped: string[] = [];
    const { granter, clock, driver, stateOf } = await setUp(
      { devices: [aScriptedSimulator('a', { booted: true })] },
      {
        stopExecs: (leaseId) => {
          stopped.push(leaseId);
          return new Promise((resolve) => (toolsGone = resolve));
        },
      },
    );
    await granter.grant('lease-1', iphone16);
    const released = granter.reclaim('lease-1');
    // Reclaiming at once (no new lease takes it), but nothing done to it while a tool runs.
    expect(stateOf('a')?.state).toBe('reclaiming');
    expect(stopped).toEqual(['lease-1']);
    await clock.advance(BOOT_MS);
    expect(driver.operations).toEqual([]);
    toolsGone();
    await clock.advance(BOOT_MS);
    expect(await released).toBe('ready');
    expect(driver.operations.map((entry) => entry.operation)).toEqual(['erase', 'boot']);
  });

  it('shuts a simulator down under the shutdown policy', async () => {
    const { granter, driver, stateOf } = await setUp(
      { devices: [aScriptedSimulator('a', { booted: true })] },
      { reclaim: 'shutdown' },
    );
    await granter.grant('lease-1', iphone16);
    expect(await granter.reclaim('lease-1')).toBe('shut-down');
    expect(driver.operations.map((entry) => entry.operation)).toEqual(['shutdown']);
    expect(stateOf('a')?.state).toBe('shutdown');
  });

  it('resets a phone and puts it back ready', async () => {
    const { granter, driver, stateOf } = await setUp({ devices: [iphone] });
    await granter.grant('lease-1', { platform: 'ios', physical: true });
    expect(await granter.reclaim('lease-1')).toBe('ready');
    expect(driver.operations.at(-1)).toEqual({ operation: 'reset', deviceId: UDID });
    expect(stateOf(UDID)?.state).toBe('ready');
  });

  it('quarantines a device whose reclaim fails', async () => {
    const { granter, stateOf } = await setUp({
      devices: [aScriptedSimulator('a', { booted: true })],
      failures: { erase: ['a'] },
    });
    await granter.grant('lease-1', iphone16);
    expect(await granter.reclaim('lease-1')).toBe('quarantined');
    expect(stateOf('a')?.state).toBe('quarantined');
  });

  it('is a no-op for a lease it does not hold', async () => {
    const { granter } = await setUp({ devices: [aScriptedSimulator('a', { booted: true })] });
    expect(await granter.reclaim('nope')).toBe('not-leased');
  });

  it('frees the device for the next lease', async () => {
    const { granter, clock } = await setUp(
      { devices: [aScriptedSimulator('a', { booted: true })] },
      { reclaim: 'erase-keep-warm' },
    );
    await granter.grant('lease-1', iphone16);
    expect((await granter.grant('lease-2', iphone16)).kind).toBe('refused');
    const released = granter.reclaim('lease-1');
    await clock.advance(BOOT_MS);
    await released;
    expect(grantedId(await granter.grant('lease-2', iphone16))).toBe('a');
  });
});

describe('adopting a lease granted before a restart', () => {
  const device = (id: string) => grantedIphone({ id, name: id });

  it('holds the device again, so no other lease gets it', async () => {
    const { granter, stateOf } = await setUp({
      devices: [aScriptedSimulator('sim-1', { booted: true })],
    });
    expect(await granter.adopt('ns/kept', device('sim-1'))).toBe(true);
    expect(stateOf('sim-1')?.state).toBe('leased');
    const other = await granter.grant('ns/other', iphone16);
    expect(grantedId(other)).toBeUndefined();
  });

  it('refuses a device that is gone or already held by another lease', async () => {
    const { granter } = await setUp({ devices: [aScriptedSimulator('sim-1', { booted: true })] });
    expect(await granter.adopt('ns/gone', device('sim-9'))).toBe(false);
    expect(grantedId(await granter.grant('ns/first', iphone16))).toBe('sim-1');
    expect(await granter.adopt('ns/second', device('sim-1'))).toBe(false);
  });
});
