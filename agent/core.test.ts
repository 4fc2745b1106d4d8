import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/fake-clock.js';
import { anAgentConfig } from '../test/fixtures/agent-config.js';
import { aScriptedPhone, aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { type AgentConfigInput } from './config.js';
import { AgentCore } from './core.js';
import { FakeDriver } from './drivers/fake/fake.js';
import type { FakeScriptInput } from './drivers/fake/fake-script.js';
import type { ViewChange } from './view.js';

const UDID = '00008110-001A2B3C4D5E';
const BOOT_MS = 2000;

async function startAgent(script: FakeScriptInput, config: Partial<AgentConfigInput> = {}) {
  const clock = new FakeClock();
  const driver = new FakeDriver({ bootMs: BOOT_MS, ...script }, { clock });
  const core = new AgentCore({
    config: anAgentConfig({
      endpoint: 'https://worker-a.example:8780',
      viewDebounceMs: 500,
      probeIntervalMs: 5000,
      refreshIntervalMs: 15_000,
      healthIntervalMs: 10_000,
      capabilities: ['camera'],
      limits: { running: 4 },
      ...config,
    }),
    driver,
    clock,
    machine: { cores: 10, memoryMb: 32 * 1024 },
  });
  const views: ViewChange[] = [];
  core.views.add((view) => views.push(view));
  await core.start();
  await clock.advance(500);
  return { clock, driver, core, views, last: () => views.at(-1)?.status };
}

describe('the agent core', () => {
  it('reports a running view with its devices, capacity and capabilities once started', async () => {
    const { core, last } = await startAgent({
      devices: [aScriptedSimulator('warm', { booted: true }), aScriptedSimulator('cold')],
    });
    expect(last()).toMatchObject({
      health: 'running',
      endpoint: 'https://worker-a.example:8780',
      capabilities: [{ name: 'camera', available: true }],
      capacity: { global: { limit: 4, running: 1, evictable: 1 } },
      devices: [{ id: 'warm', state: 'ready' }],
    });
    core.stop();
  });

  it('derives its limits from the machine when the config sets none, and says so', async () => {
    const { core, last } = await startAgent(
      { devices: [aScriptedSimulator('warm', { booted: true })] },
      { limits: undefined },
    );
    expect(last()).toMatchObject({
      capacity: { global: { limit: 5 }, platforms: { ios: { limit: 5, atRamBudget: false } } },
      limitsBasis: 'derived from 10 cores, 32 GiB: 5 running, 24 GiB for devices',
    });
    core.stop();
  });

  it('emits no view change when the periodic refresh finds nothing new', async () => {
    const { clock, core, views } = await startAgent({
      devices: [aScriptedSimulator('warm', { booted: true })],
    });
    const before = views.length;
    await clock.advance(60_000);
    expect(views.length).toBe(before);
    core.stop();
  });

  it('shows a granted device leased once the taken delay is over, and ready again at once after release', async () => {
    const { clock, core, last } = await startAgent(
      { devices: [aScriptedSimulator('warm', { booted: true })] },
      { reclaim: 'erase-keep-warm' },
    );
    expect(await core.grant('lease-1', { platform: 'ios' })).toMatchObject({
      kind: 'granted',
      lease: { source: 'warm' },
    });
    // The controller counts its own grant meanwhile (ADR 0029): the view waits 5 s.
    await clock.advance(4999);
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'ready' })]);
    await clock.advance(1);
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'leased' })]);
    const released = core.reclaim('lease-1');
    await clock.advance(BOOT_MS);
    expect(await released).toBe('ready');
    await clock.advance(500);
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'ready' })]);
    core.stop();
  });

  it('writes the view it refused a fleet lease on at once, though its device was taken within the wait', async () => {
    const { clock, core, last } = await startAgent(
      { devices: [aScriptedSimulator('warm', { booted: true })] },
      { reclaim: 'erase-keep-warm' },
    );
    await core.grant('lease-1', { platform: 'ios' });
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'ready' })]);
    // A controller that did not count lease-1 (a new leader) asks for the same simulator.
    expect(await core.grant('lease-2', { platform: 'ios' })).toMatchObject({
      kind: 'refused',
      refusal: { code: 'NO_CAPACITY' },
    });
    // Written now: the refusal is held against the view it was asked on, which now moved; and it
    // moves again when the simulator is given back, however soon.
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'leased' })]);
    const released = core.reclaim('lease-1');
    await clock.advance(BOOT_MS);
    expect(await released).toBe('ready');
    await clock.advance(500);
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'ready' })]);
    core.stop();
  });

  it('turns unhealthy when the driver check fails, and running again when it passes', async () => {
    const { clock, core, driver, last } = await startAgent({
      devices: [aScriptedSimulator('warm', { booted: true })],
    });
    driver.setHealthy(false);
    await clock.advance(10_500);
    expect(last()?.health).toBe('unhealthy');
    driver.setHealthy(true);
    await clock.advance(10_500);
    expect(last()?.health).toBe('running');
    core.stop();
  });

  it('shows a local grant leased without the taken delay: the controller does not know it', async () => {
    const { clock, core, last } = await startAgent({
      devices: [aScriptedSimulator('warm', { booted: true })],
    });
    const local = core.requestLocal({ id: 'local-1', spec: { platform: 'ios' } });
    expect(await local.outcome).toMatchObject({ kind: 'granted', lease: { source: 'warm' } });
    await clock.advance(1000);
    expect(last()?.devices).toEqual([expect.objectContaining({ id: 'warm', state: 'leased' })]);
    core.stop();
  });

  it('serves a waiting local request before a fleet lease, as soon as a device frees', async () => {
    const { clock, core, last } = await startAgent(
      { devices: [aScriptedSimulator('only', { booted: true })] },
      { reclaim: 'shutdown', limits: { running: 1 } },
    );
    await core.grant('fleet-1', { platform: 'ios' });
    const local = core.requestLocal({
      id: 'local-1',
      holder: 'local-agent',
      spec: { platform: 'ios' },
    });
    await clock.advance(500);
    expect(last()).toMatchObject({
      queueDepth: 1,
      queue: [
        {
          id: 'local-1',
          holder: 'local-agent',
          reason: 'full',
          capacityReason: 'platform-running-limit',
        },
      ],
    });
    // A fleet lease arriving while the local one waits is refused, even when capacity frees.
    const released = core.reclaim('fleet-1');
    expect(await core.grant('fleet-2', { platform: 'ios' })).toMatchObject({
      kind: 'refused',
      refusal: { code: 'NO_CAPACITY' },
    });
    await released;
    await clock.advance(BOOT_MS);
    expect(await local.outcome).toMatchObject({
      kind: 'granted',
      lease: { leaseId: 'local-1', source: 'cold' },
    });
    await clock.advance(500);
    expect(last()).toMatchObject({ queueDepth: 0, queue: [] });
    core.stop();
  });

  it('grants a waiting local physical request once its phone reads present again', async () => {
    const { clock, core, driver, last } = await startAgent({
      devices: [aScriptedPhone(UDID, { presence: { present: false, reason: 'not-present' } })],
    });
    const local = core.requestLocal({
      id: 'local-phone',
      spec: { platform: 'ios', physical: true },
    });
    await clock.advance(500);
    expect(last()).toMatchObject({
      physicalQueueDepth: 1,
      queue: [
        { id: 'local-phone', reason: 'full', capacityReason: 'device-not-present', physical: true },
      ],
      devices: [{ id: UDID, presence: { present: false, reason: 'not-present' } }],
    });
    driver.setPresence(UDID, { present: true });
    await clock.advance(5000);
    expect(await local.outcome).toMatchObject({
      kind: 'granted',
      lease: { device: { id: UDID, physical: true } },
    });
    core.stop();
  });

  // An agent with one warm simulator that granted lease-1 for a minute; `expired` lists the leases
  // it let go at their expiry.
  async function oneMinuteLease() {
    const { clock, core } = await startAgent(
      { devices: [aScriptedSimulator('warm', { booted: true })] },
      { reclaim: 'shutdown' },
    );
    const expired: string[] = [];
    core.expirations.add(({ leaseId }) => expired.push(leaseId));
    await core.grant('lease-1', { platform: 'ios' }, clock.now() + 60_000);
    return { clock, core, expired };
  }

  it('releases a lease whose time is up and says so', async () => {
    const { clock, core, expired } = await oneMinuteLease();
    await clock.advance(60_000);
    expect(expired).toEqual(['lease-1']);
    expect(core.granter.lease('lease-1')).toBeUndefined();
    core.stop();
  });

  it('keeps an extended lease past its old expiry and releases it at the new one', async () => {
    const { clock, core, expired } = await oneMinuteLease();
    core.extend('lease-1', clock.now() + 120_000);
    await clock.advance(90_000);
    expect(expired).toEqual([]);
    expect(core.granter.lease('lease-1')).toBeDefined();
    await clock.advance(30_000);
    expect(expired).toEqual(['lease-1']);
    core.extend('lease-1', clock.now() + 60_000);
    expect(core.granter.lease('lease-1')).toBeUndefined();
    core.stop();
  });

  it('plans exec on the leased device and refuses a tool that does not fit', async () => {
    const { core } = await startAgent({ devices: [aScriptedSimulator('warm', { booted: true })] });
    await core.grant('lease-1', { platform: 'ios' });
    const plan = core.execArgv('lease-1', 'simctl', ['launch', 'com.example.app']);
    expect(plan.ok && plan.argv.slice(-4)).toEqual(['simctl', 'launch', 'warm', 'com.example.app']);
    expect(core.execArgv('lease-1', 'devicectl', ['device', 'info', 'apps'])).toMatchObject({
      ok: false,
      code: 'TOOL_NOT_ALLOWED',
    });
    core.stop();
  });
});
