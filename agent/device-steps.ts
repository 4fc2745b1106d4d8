// The device machine's shell (device-machine.ts) for the moves of a virtual device that no lease is
// in: the idle sweep's shutdowns and deletes (idle-sweeper.ts), quarantine retries and an
// operator's unquarantine (quarantine-retrier.ts). The inventory stores the agent's state of each
// device (its held state and quarantine record); here that state is read as the machine's life
// (`lifeOf`), the machine answers each event (`take`), and only a move it takes is made: its next
// life is written back to the inventory at once (`write`), inside LeaseGranter.decide for a move
// that starts work, so it never races a grant: whichever of a grant and an idle shutdown, delete
// or retry comes first moves the device, and the other is refused by the table. The caller then
// carries out the row's effects in order and answers them with one event (`take` again, from the
// life it holds).
import type { Logger } from '../runtime/index.js';
import {
  NEW_DEVICE,
  nextDevice,
  type DeviceEvent,
  type DeviceLife,
  type DeviceStep,
} from './device-machine.js';
import type { Driver, DriverDevice } from './drivers/driver.js';
import type { Inventory } from './inventory.js';
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
  readonly #inventory: Inventory;
  readonly #driver: Pick<Driver, 'delete'>;
  readonly #logger: Logger;

  constructor(options: { inventory: Inventory; driver: Pick<Driver, 'delete'>; logger: Logger }) {
    this.#inventory = options.inventory;
    this.#driver = options.driver;
    this.#logger = options.logger;
  }

  /**
   * A virtual device's life as the inventory keeps it; undefined for a physical device (its own
   * rules), one not listed, or one whose power the tools do not say. A device the agent holds for a
   * lease reads as that lease state without its lease: no event taken here has a row from one.
   */
  lifeOf(id: string): DeviceLife | undefined {
    const inventory = this.#inventory;
    const making = inventory.makingFor(id);
    if (making !== undefined) return { kind: 'creating', owned: true, lease: making };
    const device = inventory.driverDevice(id);
    if (device === undefined || device.physical) return undefined;
    // Only a device the agent made, with a driver that deletes, is ever deleted.
    const owned = device.deletable === true && this.#driver.delete !== undefined;
    const held = inventory.heldState(id);
    switch (held) {
      case undefined:
        if (device.power === 'booted') return { kind: 'ready', owned };
        if (device.power === 'shutdown') return { kind: 'shutdown', owned };
        return undefined;
      case 'quarantined': {
        const record = inventory.quarantineRecord(id);
        if (record?.retrying === true) return { kind: 'retrying', owned };
        if (record?.waitsForOperator === true) return { kind: 'awaitingOperator', owned };
        return { kind: 'quarantined', owned };
      }
      // Held 'reclaiming' is a lease's reclaim or a shutdown with no lease (shuttingDown): the
      // same to every event taken here, none of which has a row from either.
      case 'booting':
      case 'leased':
      case 'reclaiming':
      case 'deleting':
        return { kind: held, owned };
    }
  }

  /**
   * The machine's answer to `event` on the device, from `from` (the life the caller holds while it
   * carries out a row's effects) or else from the inventory's state now. A refused event changes
   * nothing and is logged; a taken one is the caller's to write and carry out.
   */
  take(id: string, event: DeviceEvent, from?: DeviceLife): DeviceStep {
    const life = from ?? this.lifeOf(id);
    if (life === undefined) return { refused: `${event.type}: device ${id} is not a listed one` };
    const step = nextDevice(life, event);
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

  /** Answers a move's effects with `event`, from the life the move led to, and writes the next. */
  answer(id: string, from: DeviceLife, event: DeviceEvent, why?: string): DeviceLife | undefined {
    const step = this.take(id, event, from);
    if ('refused' in step) return undefined;
    this.write(id, step.state, why);
    return step.state;
  }

  /**
   * The planner chose to make a device for `lease` (new --make--> creating): its placeholder holds
   * the slot from now on. The caller makes it (the row's effect) and answers `made` or `makeFailed`.
   */
  make(lease: string, device: Omit<PlannedDevice, 'id' | 'state'>): Move | { refused: string } {
    const id = makingId(lease);
    const step = this.take(id, { type: 'make', lease }, this.lifeOf(id) ?? NEW_DEVICE);
    if ('refused' in step) return step;
    this.#inventory.startMaking(id, lease, device);
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
    this.write(device.id, step.state);
    this.#inventory.made(id, device);
    return step.state;
  }

  /** It could not be made (creating --makeFailed--> gone): the placeholder's slot is free again. */
  makeFailed(lease: string): void {
    const id = makingId(lease);
    const step = this.take(id, { type: 'makeFailed' });
    if (!('refused' in step)) this.write(id, step.state);
  }

  /**
   * Writes a life into the inventory (a lease state as the inventory's hold; the granter keeps the
   * lease's record, and crash-recovery.ts a recovery, held leased). A quarantine begun here
   * (from a state that was not one) takes `why` and its first retry from the quarantine policy
   * (the row's scheduleRetry); awaitingOperator drops any retry due.
   */
  write(id: string, life: DeviceLife, why = 'quarantined'): void {
    const inventory = this.#inventory;
    switch (life.kind) {
      case 'booting':
      case 'leased':
      case 'reclaiming':
        inventory.hold(id, life.kind);
        return;
      case 'recovering':
        inventory.hold(id, 'leased');
        return;
      case 'shuttingDown':
        inventory.hold(id, 'reclaiming');
        return;
      case 'deleting':
        inventory.hold(id, 'deleting');
        return;
      case 'ready':
      case 'shutdown':
        inventory.hold(id, undefined);
        return;
      case 'gone':
        if (inventory.makingFor(id) === undefined) inventory.deleted(id);
        else inventory.makingFailed(id);
        return;
      case 'retrying':
        inventory.updateQuarantine(id, { retrying: true, nextRetryAtMs: undefined });
        return;
      case 'quarantined':
        if (inventory.heldState(id) !== 'quarantined') inventory.quarantine(id, why);
        return;
      case 'awaitingOperator':
        if (inventory.heldState(id) !== 'quarantined') inventory.quarantine(id, why);
        inventory.updateQuarantine(id, { nextRetryAtMs: undefined, waitsForOperator: true });
        return;
      default:
        return;
    }
  }
}
