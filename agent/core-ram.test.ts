// The agent core costing a model's devices what they were measured to use (ADR 0021): the fake
// driver's simulators, and a process table where each booted one's launchd_sim tree uses 3000 MiB.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/fake-clock.js';
import { anAgentConfig } from '../test/fixtures/agent-config.js';
import { aScriptedSimulator } from '../test/fixtures/driver-devices.js';
import { type AgentConfigInput } from './config.js';
import { AgentCore } from './core.js';
import { parseProcessTable } from './device-memory.js';
import { FakeDriver } from './drivers/fake/fake.js';
import { ModelRam } from './model-ram.js';

const BOOT_MS = 2000;
const UDIDS = [
  '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222',
  '33333333-3333-4333-8333-333333333333',
];
const RUNTIME = '/Library/Developer/CoreSimulator/Volumes/iOS_23A343/RuntimeRoot';

/** `ps` as a Mac prints it with these simulators booted: 3000 MiB each, over two processes. */
function processTable(booted: readonly string[]): string {
  return booted
    .flatMap((udid, index) => {
      const pid = 4000 + index * 10;
      return [
        `${pid}   812   8192 ${RUNTIME}/sbin/launchd_sim /Users/ci/.simlock/simctl-set/${udid}/data/var/run/launchd_bootstrap.plist`,
        `${pid + 1} ${pid} ${3000 * 1024 - 8192} ${RUNTIME}/System/Library/CoreServices/SpringBoard.app/SpringBoard`,
      ];
    })
    .join('\n');
}

async function startAgent(config: Partial<AgentConfigInput> = {}) {
  const clock = new FakeClock();
  const driver = new FakeDriver(
    {
      bootMs: BOOT_MS,
      devices: UDIDS.map((id) => aScriptedSimulator(id, { model: 'iPhone 17', os: '26.0' })),
    },
    { clock },
  );
  const reads: string[][] = [];
  const core = new AgentCore({
    config: anAgentConfig({
      viewDebounceMs: 500,
      refreshIntervalMs: 15_000,
      reclaim: 'shutdown',
      ...config,
    }),
    driver,
    clock,
    // 16 cores, 12 GiB: 8 GiB for devices, 4 simulators at the default 2 GiB.
    machine: { cores: 16, memoryMb: 12 * 1024 },
    deviceRam: {
      models: new ModelRam(),
      readProcesses: async () => {
        const booted = (await driver.listDevices()).devices
          .filter((device) => device.power === 'booted')
          .map((device) => device.id);
        reads.push(booted);
        return parseProcessTable(processTable(booted));
      },
    },
  });
  await core.start();
  return { clock, core, reads };
}

async function grantCold(clock: FakeClock, core: AgentCore, leaseId: string) {
  const granting = core.grant(leaseId, { platform: 'ios', model: 'iPhone 17' });
  await clock.advance(BOOT_MS);
  return granting;
}

describe('the agent core with devices measured', () => {
  it('costs a model what its booted devices use once measured, and says so in the view', async () => {
    const { clock, core, reads } = await startAgent();
    // Nothing booted: nothing read, the default cost.
    expect(reads).toEqual([]);
    expect(core.status().limitsBasis).toBe(
      'derived from 16 cores, 12 GiB: 4 running, 8 GiB for devices',
    );
    expect(await grantCold(clock, core, 'lease-1')).toMatchObject({ kind: 'granted' });

    // The next listing reads the process table once: one iPhone 17 at 3000 MiB.
    await clock.advance(15_000);
    expect(reads).toHaveLength(1);
    expect(core.status().limitsBasis).toBe(
      'derived from 16 cores, 12 GiB: 4 running, 8 GiB for devices; ' +
        'RAM per device: iPhone 17 2.9 GiB measured (the last one)',
    );
    // 2 × 3000 MiB fit in 8 GiB; a third would not, though 3 × 2048 MiB would have.
    expect(await grantCold(clock, core, 'lease-2')).toMatchObject({ kind: 'granted' });
    expect(await core.grant('lease-3', { platform: 'ios', model: 'iPhone 17' })).toMatchObject({
      kind: 'refused',
      refusal: { code: 'NO_CAPACITY', capacityReason: 'ram-budget' },
    });

    // Read again no sooner than a minute after the first time, both devices sampled.
    await clock.advance(30_000);
    expect(reads).toHaveLength(1);
    await clock.advance(30_000);
    expect(reads).toEqual([[UDIDS[0]], [UDIDS[0], UDIDS[1]]]);
    expect(core.status().limitsBasis).toMatch(/iPhone 17 2\.9 GiB measured \(median of 3\)$/);
    core.stop();
  });

  it("keeps the config's modelRamMb over the measurement", async () => {
    const { clock, core, reads } = await startAgent({
      limits: {
        running: 4,
        platforms: { ios: { running: 4, ramBudgetMb: 8192 } },
        modelRamMb: { 'iPhone 17': 2048 },
      },
    });
    expect(await grantCold(clock, core, 'lease-1')).toMatchObject({ kind: 'granted' });
    await clock.advance(15_000);
    expect(reads).toHaveLength(1);
    expect(core.status().limitsBasis).toBe('set in the agent config');
    expect(await grantCold(clock, core, 'lease-2')).toMatchObject({ kind: 'granted' });
    expect(await grantCold(clock, core, 'lease-3')).toMatchObject({ kind: 'granted' });
    core.stop();
  });
});
