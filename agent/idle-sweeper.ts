// Idle devices go: a booted device nobody leases is shut down, and a device the agent made that
// nobody used for long is deleted (idle-plan.ts proposes which). Each is a move of the device
// machine (device-steps.ts: rows ready→shuttingDown on idleShutdown, shutdown→deleting on
// idleDelete): the machine takes it among the grant decisions (LeaseGranter.decide) and the
// device is held before anything is awaited, so a sweep never races a grant (the machine decides:
// a device a grant took first refuses the idle event); the tools run after, and their outcome is
// the machine's next event (stopped, stopFailed, deleted, deleteFailed). A device that will not
// shut down is quarantined and tried again; one that will not be deleted waits for an operator.
import type { Clock, Logger } from '../runtime/index.js';
import type { Driver } from './drivers/driver.js';
import type { DeviceLife } from './device-machine.js';
import type { DeviceSteps, TakenStep } from './device-steps.js';
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
  /** The device machine's shell: every shutdown and delete is its move. */
  steps: DeviceSteps;
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
    const { inventory, granter, clock, settings, steps } = this.#options;
    const { plan, taken } = await granter.decide(() => {
      const proposed = planIdle(
        inventory.devices(() => undefined),
        clock.now(),
        settings,
        diskLow,
      );
      // The machine takes each proposal or refuses it; a taken one is held now.
      const moves = new Map<string, TakenStep>();
      const take = (id: string, type: 'idleShutdown' | 'idleDelete'): boolean => {
        const step = steps.take(id, { type });
        if ('refused' in step) return false;
        steps.write(id, step.state);
        moves.set(id, step);
        return true;
      };
      const chosen: IdlePlan = {
        shutdown: proposed.shutdown.filter((device) => take(device.id, 'idleShutdown')),
        delete: proposed.delete.filter((device) => take(device.id, 'idleDelete')),
      };
      return { plan: chosen, taken: moves };
    });
    await Promise.all([...taken].map(([id, step]) => this.#carryOut(id, step, diskLow)));
    return plan;
  }

  /** Runs a taken move's effects in order, then answers the machine with how they went. */
  async #carryOut(id: string, step: TakenStep, diskLow: boolean): Promise<void> {
    const { inventory, driver, steps } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined) return;
    const deleting = step.state.kind === 'deleting';
    let failure: string | undefined;
    try {
      for (const effect of step.effects) {
        if (effect.type === 'shutdown' && inventory.driverDevice(id)?.power !== 'shutdown') {
          await driver.shutdown(device);
          inventory.setPower(id, 'shutdown');
        } else if (effect.type === 'delete') {
          if (driver.delete === undefined)
            throw new Error(`the ${driver.kind} driver deletes nothing`);
          await driver.delete(device);
        }
      }
    } catch (error) {
      failure = (error as Error).message;
    }
    const [done, failed] = deleting
      ? (['deleted', 'deleteFailed'] as const)
      : (['stopped', 'stopFailed'] as const);
    const why = `idle ${deleting ? 'delete' : 'shutdown'} failed: ${failure}`;
    const life = steps.answer(id, { type: failure === undefined ? done : failed }, why);
    if (life !== undefined) this.#log(id, device.model, life, failure, diskLow);
  }

  #log(
    id: string,
    model: string,
    life: DeviceLife,
    failure: string | undefined,
    diskLow: boolean,
  ): void {
    const { logger } = this.#options;
    if (life.kind === 'shutdown') logger.info('shut down an idle device', { device: id, model });
    else if (life.kind === 'gone')
      logger.info('deleted an idle device it made', {
        device: id,
        model,
        why: diskLow ? 'disk space low' : 'unused for idle.deleteAfterSeconds',
      });
    else if (life.kind === 'quarantined')
      logger.warn('could not shut down an idle device; quarantined', {
        device: id,
        error: failure,
      });
    else
      logger.warn('could not delete an idle device; quarantined until an operator acts', {
        device: id,
        error: failure,
      });
  }
}
