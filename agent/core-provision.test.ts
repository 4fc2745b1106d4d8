// A host that cannot make devices (no SDK found, a tool failing) says why in its log, once when the
// problem starts and once when it ends, not at every listing.
import { describe, expect, it } from 'vitest';
import type { Logger } from '../runtime/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { anAgentConfig } from '../test/fixtures/agent-config.js';
import { AgentCore } from './core.js';
import type { DeviceListing } from './drivers/driver.js';
import { FakeDriver } from './drivers/fake/fake.js';

class DriverWithProblem extends FakeDriver {
  problem: string | undefined = 'no Android SDK found (set ANDROID_HOME)';
  override async listDevices(): Promise<DeviceListing> {
    const listing = await super.listDevices();
    return this.problem === undefined ? listing : { ...listing, provisionProblem: this.problem };
  }
}

function recordingLogger(lines: string[]): Logger {
  const logger: Logger = {
    debug: () => undefined,
    info: (message) => lines.push(`info ${message}`),
    warn: (message, fields) => lines.push(`warn ${message}: ${String(fields?.reason)}`),
    error: () => undefined,
    child: () => logger,
  };
  return logger;
}

describe('a host that cannot make devices', () => {
  it('says why once, and says when it can again', async () => {
    const clock = new FakeClock();
    const driver = new DriverWithProblem({ platforms: ['android'] }, { clock });
    const lines: string[] = [];
    const core = new AgentCore({
      config: anAgentConfig({
        name: 'linux-1',
        limits: {},
      }),
      driver,
      clock,
      logger: recordingLogger(lines),
    });
    await core.refresh();
    await core.refresh();
    driver.problem = undefined;
    await core.refresh();
    expect(lines).toEqual([
      'warn this host can make no devices: no Android SDK found (set ANDROID_HOME)',
      'info this host can make devices again',
    ]);
    core.stop();
  });
});
