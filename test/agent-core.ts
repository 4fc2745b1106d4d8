// A whole agent core over a driver under test, as the driver tests take a device through a lease,
// a crash and a recovery: the agent's own decisions over the real driver and its stand-ins.
import { AgentCore, type AgentConfigInput, type Driver } from '../agent/index.js';
import { systemClock } from '../runtime/index.js';
import { aQuietAgentConfig } from './fixtures/agent-config.js';

/**
 * A started core over `driver` (of the kinds `drivers`) on a 4-core, 16 GB host, configured by
 * aQuietAgentConfig: its timers never fire on their own.
 */
export async function startQuietCore(
  driver: Driver,
  drivers: AgentConfigInput['drivers'],
): Promise<AgentCore> {
  const core = new AgentCore({
    config: aQuietAgentConfig(drivers),
    driver,
    clock: systemClock(),
    machine: { cores: 4, memoryMb: 16_384 },
  });
  await core.start();
  return core;
}
