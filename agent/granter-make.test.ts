// Grants that make the device first: the planner's `create` plan carried out by the granter, with
// the steps (provisioning, booting) and their estimates told as they begin.
import { describe, expect, it } from 'vitest';
import type { DeviceSpec } from '../api/index.js';
import { aGranter } from '../test/agent-granter.js';
import { aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import type { AgentConfigInput } from './config.js';
import type { FakeScriptInput } from './drivers/fake/fake-script.js';
import { deviceName, type GrantStep } from './granter.js';
import { chooseToMake } from './make-choice.js';
import { StageTimings } from './stage-timings.js';

const PROVISION_MS = 2000;
const BOOT_MS = 5000;

async function setUp(script: FakeScriptInput, limits: AgentConfigInput['limits'] = { running: 4 }) {
  const timings = new StageTimings();
  const parts = await aGranter(
    { bootMs: BOOT_MS, provisionMs: PROVISION_MS, ...script },
    { limits, timings },
  );
  const devices = () => parts.inventory.devices(() => undefined);
  return { ...parts, devices, timings };
}

const makesIphone16: FakeScriptInput = {
  makeable: [{ platform: 'ios', model: 'iPhone 16', os: ['17.5', '18.4'] }],
};
const iphone16: DeviceSpec = { platform: 'ios', model: 'iPhone 16' };

describe('granting a device the agent makes', () => {
  it('makes, boots and grants a model the host has no device of, telling each step', async () => {
    const { granter, clock, driver, devices } = await setUp({ ...makesIphone16 });
    const steps: GrantStep[] = [];
    const pending = granter.grant('lease-1', iphone16, 'fleet', (step) => steps.push(step));
    await clock.advance(0);

    // While it is being made, its slot is taken (the view shows it booting).
    expect(devices()).toMatchObject([{ model: 'iPhone 16', state: 'booting' }]);
    expect(steps).toMatchObject([
      {
        stage: 'provisioning',
        device: { model: 'iPhone 16', os: '18.4' },
        estimate: { basis: 'default' },
      },
    ]);
    await clock.advance(PROVISION_MS);
    expect(steps.map((step) => step.stage)).toEqual(['provisioning', 'booting']);
    expect(steps[1]!.startedAtMs - steps[0]!.startedAtMs).toBe(PROVISION_MS);
    await clock.advance(BOOT_MS);

    const outcome = await pending;
    expect(outcome).toMatchObject({
      kind: 'granted',
      lease: { source: 'cold', device: { model: 'iPhone 16', os: '18.4', physical: false } },
    });
    const made = outcome.kind === 'granted' ? outcome.lease.device.id : '';
    expect(made).toMatch(/^simlock-iphone-16-[0-9a-f]{6}$/);
    expect(driver.operations).toEqual([
      { operation: 'create', deviceId: made },
      { operation: 'boot', deviceId: made },
    ]);
    expect(devices()).toMatchObject([{ id: made, state: 'leased' }]);
  });

  it('estimates the next grant from what this host measured', async () => {
    const { granter, clock } = await setUp({ ...makesIphone16 });
    const first = granter.grant('lease-1', iphone16);
    await clock.advance(PROVISION_MS + BOOT_MS);
    await first;
    const steps: GrantStep[] = [];
    const second = granter.grant('lease-2', iphone16, 'fleet', (step) => steps.push(step));
    await clock.advance(PROVISION_MS + BOOT_MS);
    await second;
    expect(steps.map((step) => [step.stage, step.estimate])).toEqual([
      ['provisioning', { ms: PROVISION_MS, basis: 'the last one on this host' }],
      ['booting', { ms: BOOT_MS, basis: 'the last one on this host' }],
    ]);
  });

  it('boots a shut-down device of the model before it makes another', async () => {
    const { granter, clock, driver } = await setUp({
      ...makesIphone16,
      devices: [aScriptedSimulator('sim-a')],
    });
    const pending = granter.grant('lease-1', iphone16);
    await clock.advance(BOOT_MS);
    expect(await pending).toMatchObject({ lease: { device: { id: 'sim-a' } } });
    expect(driver.operations.map((operation) => operation.operation)).toEqual(['boot']);
  });

  it('makes a second device when the first is leased, within the running limit', async () => {
    const { granter, clock, devices } = await setUp(
      { ...makesIphone16 },
      {
        running: 4,
        platforms: { ios: { running: 2 } },
      },
    );
    const first = granter.grant('lease-1', iphone16);
    const second = granter.grant('lease-2', iphone16);
    const third = granter.grant('lease-3', iphone16);
    await clock.advance(PROVISION_MS + BOOT_MS);
    const outcomes = await Promise.all([first, second, third]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['granted', 'granted', 'refused']);
    expect(outcomes[2]).toMatchObject({
      refusal: { code: 'NO_CAPACITY', capacityReason: 'platform-running-limit' },
    });
    expect(devices().filter((device) => device.state === 'leased')).toHaveLength(2);
  });

  it("refuses with the tool's words when making fails, and frees the slot", async () => {
    const { granter, clock, devices } = await setUp({
      ...makesIphone16,
      failures: { create: ['iPhone 16'] },
    });
    const pending = granter.grant('lease-1', iphone16);
    await clock.advance(PROVISION_MS);
    const outcome = await pending;
    expect(outcome).toMatchObject({ kind: 'refused', refusal: { code: 'NO_CAPACITY' } });
    expect(outcome.kind === 'refused' && outcome.refusal.message).toBe(
      'could not make a new iPhone 16 (18.4): fake: making iPhone 16 fails (scripted)',
    );
    expect(devices()).toEqual([]);
  });

  it('keeps a device it made when a listing taken before it was made comes in late', async () => {
    const { granter, clock, steps, driver, devices } = await setUp({ ...makesIphone16 });
    const staleListing = await driver.listDevices();
    const pending = granter.grant('lease-1', iphone16);
    await clock.advance(PROVISION_MS + BOOT_MS);
    const outcome = await pending;
    const made = outcome.kind === 'granted' ? outcome.lease.device.id : '';
    steps.takeListing(staleListing, 0);
    expect(devices()).toMatchObject([{ id: made, state: 'leased' }]);
  });
});

describe('chooseToMake', () => {
  const makeable = [
    { platform: 'ios', model: 'iPhone 16', class: 'phone', os: ['17.5', '18.4'] },
    { platform: 'ios', model: 'iPhone 15', class: 'phone', os: ['17.5', '18.4', '18.2'] },
    { platform: 'ios', model: 'iPad Pro', class: 'tablet', os: ['18.4'] },
    { platform: 'android', model: 'Pixel 7', class: 'phone', os: ['33', '34'] },
  ] as const;

  it.each([
    [
      { platform: 'ios', model: 'iphone 16' },
      { model: 'iPhone 16', os: '18.4' },
    ],
    [
      { platform: 'ios', model: 'iPhone 16', os: '17.5' },
      { model: 'iPhone 16', os: '17.5' },
    ],
    [{ platform: 'ios' }, { model: 'iPhone 15', os: '18.4' }],
    [
      { platform: 'ios', class: 'tablet' },
      { model: 'iPad Pro', os: '18.4' },
    ],
    [
      { platform: 'android', os: '<34' },
      { model: 'Pixel 7', os: '33' },
    ],
    [{ platform: 'ios', model: 'iPhone 16', os: '16.0' }, undefined],
    [{ platform: 'android', model: 'Pixel 9' }, undefined],
  ] as const)('%j → %j', (spec, expected) => {
    const chosen = chooseToMake(
      spec,
      makeable.map((entry) => ({ ...entry, os: [...entry.os] })),
    );
    expect(chosen === undefined ? undefined : { model: chosen.model, os: chosen.os }).toEqual(
      expected,
    );
  });

  it('names a device so that simctl and avdmanager both take it', () => {
    expect(deviceName('iPad Pro 13-inch (M4)')).toMatch(
      /^simlock-ipad-pro-13-inch-m4-[0-9a-f]{6}$/,
    );
  });
});
