// Idle devices go: a booted device nobody leases is shut down, and a device the agent made that
// nobody used for long is deleted (idle-plan.ts decides which). The choice is made among the
// grant decisions (LeaseGranter.decide), and the chosen devices are held (reclaiming, deleting)
// before anything is awaited, so a sweep never races a grant; the tools run after. A device that
// will not shut down or be deleted is quarantined, as a failed reclaim is.
import type { Clock, Logger } from '../runtime/index.js';
import type { Driver } from './drivers/driver.js';
import type { LeaseGranter } from './granter.js';
import { planIdle, type IdlePlan, type IdleSettings } from './idle-plan.js';
import type { Inventory } from './inventory.js';

export interface IdleSweeperOptions {
  driver: Driver;
  inventory: Inventory;
  granter: Pick<LeaseGranter, 'decide'>;
  clock: Clock;
  settings: IdleSettings;
  logger: Logger;
}

export class IdleSweeper {
  readonly #options: IdleSweeperOptions;
  #sweeping: Promise<IdlePlan> | undefined;

  constructor(options: IdleSweeperOptions) {
    this.#options = options;
  }

  /** One sweep (a sweep already running is answered instead); resolves once its tools are done. */
  sweep(diskLow: boolean): Promise<IdlePlan> {
    this.#sweeping ??= this.#sweep(diskLow).finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  async #sweep(diskLow: boolean): Promise<IdlePlan> {
    const { inventory, granter, clock, settings } = this.#options;
    const plan = await granter.decide(() => {
      const chosen = planIdle(
        inventory.devices(() => undefined),
        clock.now(),
        settings,
        diskLow,
      );
      for (const device of chosen.shutdown) inventory.hold(device.id, 'reclaiming');
      for (const device of chosen.delete) inventory.hold(device.id, 'deleting');
      return chosen;
    });
    await Promise.all([
      ...plan.shutdown.map((device) => this.#shutDown(device.id)),
      ...plan.delete.map((device) => this.#delete(device.id, diskLow)),
    ]);
    return plan;
  }

  async #shutDown(id: string): Promise<void> {
    const { inventory, driver, logger } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined) return;
    try {
      await driver.shutdown(device);
      inventory.setPower(id, 'shutdown');
      inventory.hold(id, undefined);
      logger.info('shut down an idle device', { device: id, model: device.model });
    } catch (error) {
      inventory.quarantine(id, `idle shutdown failed: ${(error as Error).message}`);
      logger.warn('could not shut down an idle device; quarantined', { device: id, error });
    }
  }

  async #delete(id: string, diskLow: boolean): Promise<void> {
    const { inventory, driver, logger } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined) return;
    try {
      if (driver.delete === undefined) throw new Error(`the ${driver.kind} driver deletes nothing`);
      await driver.delete(device);
      inventory.deleted(id);
      logger.info('deleted an idle device it made', {
        device: id,
        model: device.model,
        why: diskLow ? 'disk space low' : 'unused for idle.deleteAfterSeconds',
      });
    } catch (error) {
      inventory.quarantine(id, `idle delete failed: ${(error as Error).message}`);
      logger.warn('could not delete an idle device; quarantined', { device: id, error });
    }
  }
}
