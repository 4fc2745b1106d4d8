// The care of devices no lease is in, both moves of the device machine through the agent's shell
// (device-steps.ts): idle tiers (idle-sweeper.ts) and quarantine retries (quarantine-retrier.ts),
// wired from the agent's config. Apart from core.ts so that the core reads as what it owns.
import type { Clock, Logger } from '../runtime/index.js';
import type { AgentConfig, Limits } from './config.js';
import type { DeviceSteps } from './device-steps.js';
import type { Driver } from './drivers/driver.js';
import type { LeaseGranter } from './granter.js';
import { IdleSweeper } from './idle-sweeper.js';
import type { Inventory } from './inventory.js';
import { QuarantineRetrier } from './quarantine-retrier.js';

export interface DeviceCareOptions {
  config: AgentConfig;
  driver: Driver;
  inventory: Inventory;
  /** The device machine's shell (the agent's one). */
  steps: DeviceSteps;
  granter: LeaseGranter;
  clock: Clock;
  limits: Limits;
  logger: Logger;
  /** A device back in service may be what a local request waits for. */
  onReturned: () => void;
}

export function deviceCare(options: DeviceCareOptions): {
  sweeper: IdleSweeper;
  quarantines: QuarantineRetrier;
} {
  const { config, driver, inventory, steps, granter, clock, logger } = options;
  const sweeper = new IdleSweeper({
    steps,
    driver,
    inventory,
    granter,
    clock,
    settings: {
      shutdownAfterMs: config.idle.shutdownAfterSeconds * 1000,
      deleteAfterMs: config.idle.deleteAfterSeconds * 1000,
      warm: config.idle.warm,
    },
    logger,
  });
  const quarantines = new QuarantineRetrier({
    steps,
    driver,
    inventory,
    granter,
    clock,
    limits: options.limits,
    settings: { backoffMs: config.quarantine.retryBackoffSeconds.map((seconds) => seconds * 1000) },
    logger,
    onReturned: options.onReturned,
  });
  return { sweeper, quarantines };
}
