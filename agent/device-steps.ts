// The device machine's shell (device-machine.ts): every move of a simulator or emulator goes
// through here. A device's life is read from the inventory, the one store of it; the machine
// answers an event (`take`), and only a move it takes is made: its next life is written back at
// once (`write`), inside LeaseGranter.decide for a move that starts work, so none races a grant:
// whichever of a grant and an idle shutdown, delete or retry comes first moves the device, and the
// table refuses the other. The caller then carries out the row's effects in order and answers them
// with one event (`answer`), taken from the life stored then: a move made meanwhile (the device
// gone from the listing) refuses a stale answer. What a listing says is taken here too
// (`takeListing`: listed, listedGone); a lease whose device the tools no longer list is told to
// `leaseLost` (crash-recovery.ts ends it, as the row's effects say). Phones keep their own rules
// (the inventory's holdPhysical).
import type { Logger } from '../runtime/index.js';
import {
  NEW_DEVICE,
  nextDevice,
  type DeviceEffect,
  type DeviceEvent,
  type DeviceLife,
  type DeviceStep,
} from './device-machine.js';
import type { DeviceListing, Driver, DriverDevice } from './drivers/driver.js';
import type { Inventory } from './inventory.js';
import { Listeners } from './listeners.js';
import type { PlannedDevice } from './planner.js';

/** A move the machine took: the device's life after it, and the effects to carry out. */
export type TakenStep = Extract<DeviceStep, { state: DeviceLife }>;

/** A move taken on one device. */
export interface Move {
  id: string;
  step: TakenStep;
}

/**
 * The id a device being made for `lease` stands under until the tools have made it (its
 * placeholder, which holds its slot); the life then moves to the device's own id.
 */
export function makingId(lease: string): string {
  return `making ${lease}`.slice(0, 128);
}

export class DeviceSteps {
  /**
   * A lease's device is gone from the host (listedGone, taken): the row's effects that name the
   * lease (stop its tools, lose it) are the listener's to carry out.
   */
  readonly leaseLost = new Listeners<{ lease: string; effects: DeviceEffect[] }>();
  readonly #inventory: Inventory;
  readonly #driver: Pick<Driver, 'delete'>;
  readonly #logger: Logger;

  constructor(options: { inventory: Inventory; driver: Pick<Driver, 'delete'>; logger: Logger }) {
    this.#inventory = options.inventory;
    this.#driver = options.driver;
    this.#logger = options.logger;
  }

  /** A virtual device's life; undefined for one not taken in (and for a phone: its own rules). */
  lifeOf(id: string): DeviceLife | undefined {
    return this.#inventory.lifeOf(id);
  }

  /**
   * The machine's answer to `event` on the device, from its life now (`new` when it has none). A
   * refused event changes nothing and is logged; a taken one is the caller's to write and carry
   * out.
   */
  take(id: string, event: DeviceEvent): DeviceStep {
    const step = nextDevice(this.lifeOf(id) ?? NEW_DEVICE, event);
    if ('refused' in step) {
      this.#logger.debug('device event refused', { device: id, refused: step.refused });
    }
    return step;
  }

  /**
   * Takes `event` on every device and writes each next life, or, when the machine refuses it on
   * any of them, writes nothing and answers the first refusal.
   */
  takeAll(ids: readonly string[], event: DeviceEvent): Move[] | { refused: string } {
    const moves: Move[] = [];
    for (const id of ids) {
      const step = this.take(id, event);
      if ('refused' in step) return step;
      moves.push({ id, step });
    }
    for (const move of moves) this.write(move.id, move.step.state);
    return moves;
  }

  /** Answers a move's effects with `event` and writes the next life; undefined when refused. */
  answer(id: string, event: DeviceEvent, why?: string): DeviceLife | undefined {
    const step = this.take(id, event);
    if ('refused' in step) return undefined;
    this.write(id, step.state, why);
    return step.state;
  }

  /**
   * Writes a life into the inventory. A quarantine begun here (from a life that was not one) says
   * `why`, its first retry set by the quarantine policy (the row's scheduleRetry); a retry running,
   * or a device waiting for an operator, has none due. A device the agent deleted is gone from the
   * listing at once.
   */
  write(id: string, life: DeviceLife, why = 'quarantined'): void {
    const inventory = this.#inventory;
    inventory.batch(() => {
      inventory.setLife(id, life);
      switch (life.kind) {
        case 'quarantined':
        case 'awaitingOperator':
          if (inventory.quarantineRecord(id) === undefined) inventory.startQuarantine(id, why);
          if (life.kind === 'awaitingOperator') {
            inventory.updateQuarantine(id, { nextRetryAtMs: undefined });
          }
          return;
        case 'retrying':
          inventory.updateQuarantine(id, { nextRetryAtMs: undefined });
          return;
        case 'gone':
          inventory.deleted(id);
          return;
        default:
          return;
      }
    });
  }

  /**
   * The planner chose to make a device for `lease` (new --make--> creating): its placeholder holds
   * the slot from now on. The caller makes it (the row's effect) and answers `made` or `makeFailed`.
   */
  make(lease: string, device: Omit<PlannedDevice, 'id' | 'state'>): Move | { refused: string } {
    const id = makingId(lease);
    const step = this.take(id, { type: 'make', lease });
    if ('refused' in step) return step;
    this.#inventory.batch(() => {
      this.#inventory.startMaking(id, device);
      this.write(id, step.state);
    });
    return { id, step };
  }

  /**
   * The tools made the device for `lease` (creating --made--> booting): its life moves from the
   * placeholder to the device's own id, held for the lease while it boots (the row's boot).
   */
  made(lease: string, device: DriverDevice): DeviceLife | undefined {
    const id = makingId(lease);
    const step = this.take(id, { type: 'made' });
    if ('refused' in step) return undefined;
    this.#inventory.batch(() => {
      this.write(device.id, step.state);
      this.#inventory.made(id, device);
    });
    return step.state;
  }

  /** It could not be made (creating --makeFailed--> gone): the placeholder's slot is free again. */
  makeFailed(lease: string): void {
    this.answer(makingId(lease), { type: 'makeFailed' });
  }

  /** Lists the driver's devices and takes the listing in. */
  async refresh(driver: Pick<Driver, 'listDevices'>): Promise<void> {
    const startedAt = this.#inventory.beginListing();
    const listing = await driver.listDevices();
    this.takeListing(listing, startedAt);
  }

  /**
   * Takes a listing in (`startedAt`: the inventory's sequence when it began) and tells the machine
   * what it says: `listed` for a device seen for the first time or whose power the tools say
   * changed (not by the agent), `listedGone` for one no longer listed. The view sees it all at once.
   */
  takeListing(listing: DeviceListing, startedAt?: number): void {
    const inventory = this.#inventory;
    const lost: { lease: string; effects: DeviceEffect[] }[] = [];
    inventory.batch(() => {
      const news = inventory.applyListing(listing, startedAt);
      for (const device of news.listed) {
        // Only a device the agent made, with a driver that deletes, is ever deleted.
        const owned = device.deletable === true && this.#driver.delete !== undefined;
        const booted = device.power === 'booted';
        this.answer(device.id, { type: 'listed', owned, booted });
      }
      for (const id of news.gone) {
        const step = this.take(id, { type: 'listedGone' });
        if ('refused' in step) continue;
        this.write(id, step.state);
        this.#logger.info('a device is gone from the host', { device: id });
        const ending = step.effects.find((effect) => effect.type === 'endLease');
        if (ending !== undefined) lost.push({ lease: ending.lease, effects: step.effects });
      }
    });
    for (const entry of lost) this.leaseLost.emit(entry);
  }
}
