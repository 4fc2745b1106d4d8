// A lease granter over the fake driver on a fake clock, with the inventory and presence watcher it
// decides from, as the granter's tests build it: the script's devices listed once, four devices
// at most, erase-keep-warm, no capabilities and nothing waiting locally unless the test says so.
import { silentLogger } from '../runtime/index.js';
import {
  DeviceSteps,
  FakeDriver,
  Inventory,
  LeaseGranter,
  Limits,
  PresenceWatcher,
  type AgentConfigInput,
  type FakeScriptInput,
  type LeaseGranterOptions,
} from '../agent/index.js';
import { FakeClock } from './fake-clock.js';

export async function aGranter(
  script: FakeScriptInput,
  options: Partial<
    Omit<LeaseGranterOptions, 'limits' | 'driver' | 'inventory' | 'presence' | 'clock' | 'steps'>
  > & {
    limits?: AgentConfigInput['limits'];
  } = {},
) {
  const clock = new FakeClock();
  const driver = new FakeDriver(script, { clock });
  const inventory = new Inventory(clock);
  // The first listing goes through the device machine, as the agent's does (device-steps.ts).
  const steps = new DeviceSteps({ inventory, driver, logger: silentLogger });
  await steps.refresh(driver);
  const presence = new PresenceWatcher({
    clock,
    probeIntervalMs: 10_000,
    readPresence: (device) => driver.readPresence(device),
    physicalDevices: () => inventory.physicalDevices(),
  });
  const { limits, ...rest } = options;
  const granter = new LeaseGranter({
    driver,
    inventory,
    presence,
    clock,
    reclaim: 'erase-keep-warm',
    capabilities: () => [],
    steps,
    ...rest,
    limits: Limits.parse(limits ?? { running: 4 }),
  });
  return { clock, driver, inventory, steps, presence, granter };
}
