// The slow work of a grant, after the granter's decision reserved the device (the binding cycle,
// as kube-scheduler keeps binding apart from scheduling): evict what the plan names, make the
// device when the plan says so, and boot it, telling each step as it begins with this host's
// estimate and measuring it for the next one. A device that will not boot is quarantined; a
// device that could not be made frees its slot. Each is the device machine's move (taken in the
// decision, answered here through device-steps.ts: made, makeFailed, booted, bootFailed, and an
// eviction's stopped or stopFailed).
import { randomBytes } from 'node:crypto';
import type { GrantedDevice, GrantStage } from '../api/index.js';
import type { Clock, Logger } from '../runtime/index.js';
import type { DeviceSteps, Move } from './device-steps.js';
import type { DeviceToMake, Driver, DriverDevice } from './drivers/driver.js';
import type { Inventory } from './inventory.js';
import type { AgentRefusal, PlannedDevice } from './planner.js';
import type { StageEstimate, StageSubject, StageTimings } from './stage-timings.js';

/** A slow step of a grant beginning: making the device, or booting it, with its estimate. */
export interface GrantStep {
  stage: GrantStage;
  startedAtMs: number;
  device: StageSubject;
  estimate: StageEstimate;
}

export type GrantStepListener = (step: GrantStep) => void;

/** The device booted and held `leased` for the lease, or why not. */
export type Prepared = { device: PlannedDevice } | { refusal: AgentRefusal };

export interface DevicePreparationOptions {
  driver: Driver;
  inventory: Inventory;
  clock: Clock;
  timings: StageTimings;
  logger: Logger;
  /** The device machine's shell: an eviction's shutdown is answered to it. */
  steps: DeviceSteps;
}

function couldNotEvict(stuck: string): Prepared {
  return { refusal: { code: 'NO_CAPACITY', message: `could not shut down ${stuck} to make room` } };
}

export class DevicePreparation {
  readonly #options: DevicePreparationOptions;

  constructor(options: DevicePreparationOptions) {
    this.#options = options;
  }

  /** Boots a reserved shut-down device, after shutting down the ones evicted for it. */
  async bootCold(
    device: PlannedDevice,
    evict: readonly Move[],
    onStep: GrantStepListener | undefined,
  ): Promise<Prepared> {
    const stuck = await this.#evict(evict);
    if (stuck !== undefined) {
      // Not booted (booting --bootCancelled--> shutdown): free again, the lease refused.
      this.#options.steps.answer(device.id, { type: 'bootCancelled' });
      return couldNotEvict(stuck);
    }
    return this.#boot(device, onStep);
  }

  /**
   * Makes the device the plan asked for (its placeholder holds the slot for `lease`: creating),
   * then boots it; answers the machine `made`, or `makeFailed` (the lease refused, the slot freed).
   */
  async makeAndBoot(
    lease: string,
    want: DeviceToMake,
    evict: readonly Move[],
    onStep: GrantStepListener | undefined,
  ): Promise<Prepared> {
    const { driver, clock, timings, logger, steps } = this.#options;
    const stuck = await this.#evict(evict);
    if (stuck !== undefined) {
      steps.makeFailed(lease);
      return couldNotEvict(stuck);
    }
    const startedAtMs = this.#step('provisioning', want, onStep);
    let made: DriverDevice;
    try {
      if (driver.create === undefined)
        throw new Error(`the ${driver.kind} driver makes no devices`);
      made = await driver.create(want, deviceName(want.model));
    } catch (error) {
      steps.makeFailed(lease);
      const message = `could not make a new ${want.model} (${want.os}): ${(error as Error).message}`;
      logger.warn('making a device failed', { lease, model: want.model, error });
      return { refusal: { code: 'NO_CAPACITY', message: message.slice(0, 1024) } };
    }
    timings.record('provisioning', want, clock.now() - startedAtMs);
    logger.info('made a device', { lease, device: made.id, model: made.model });
    // creating --made--> booting: the device the placeholder stood for, held for the lease.
    if (steps.made(lease, made) === undefined) {
      return {
        refusal: { code: 'NO_CAPACITY', message: `the device made, ${made.id}, was taken` },
      };
    }
    const planned = this.#options.inventory
      .devices(() => undefined)
      .find((device) => device.id === made.id) ?? { ...made, state: 'booting' as const };
    return this.#boot(planned, onStep);
  }

  /**
   * Shuts the evicted devices down (the machine's evict moves, answered stopped, or stopFailed:
   * quarantined); the id of the first that would not go.
   */
  async #evict(evict: readonly Move[]): Promise<string | undefined> {
    const { inventory, driver, logger, steps } = this.#options;
    const evictions = await Promise.allSettled(
      evict.map(async ({ id }) => {
        const device = this.#driverDevice(id);
        await driver.shutdown(device);
        inventory.setPower(device.id, 'shutdown');
      }),
    );
    let stuck: string | undefined;
    evictions.forEach((result, index) => {
      const { id } = evict[index]!;
      if (result.status === 'fulfilled') {
        steps.answer(id, { type: 'stopped' });
        return;
      }
      const error = (result.reason as Error).message;
      stuck ??= id;
      steps.answer(id, { type: 'stopFailed' }, `could not shut it down to make room: ${error}`);
      logger.warn('eviction failed; device quarantined', { device: id, error });
    });
    return stuck;
  }

  /**
   * Boots a reserved device and holds it leased (booting --booted--> leased); a device that will
   * not boot is quarantined (bootFailed; the row's shutdown is left to its first retry, which
   * shuts a device still running down first).
   */
  async #boot(device: PlannedDevice, onStep: GrantStepListener | undefined): Promise<Prepared> {
    const { inventory, driver, clock, timings, logger, steps } = this.#options;
    const startedAtMs = this.#step('booting', device, onStep);
    try {
      await driver.boot(this.#driverDevice(device.id));
    } catch (error) {
      const why = `boot failed: ${(error as Error).message}`;
      steps.answer(device.id, { type: 'bootFailed' }, why);
      logger.warn('boot failed; device quarantined', {
        device: device.id,
        error: (error as Error).message,
      });
      return {
        refusal: {
          code: 'NO_CAPACITY',
          message: `boot of ${device.id} failed: ${(error as Error).message}`.slice(0, 1024),
        },
      };
    }
    timings.record('booting', device, clock.now() - startedAtMs);
    inventory.setPower(device.id, 'booted');
    // A device gone from the host meanwhile (listedGone: its lease refused) is not answered booted.
    if (steps.answer(device.id, { type: 'booted' }) === undefined) {
      return { refusal: { code: 'NO_CAPACITY', message: `${device.id} is gone from the host` } };
    }
    return { device };
  }

  /** Tells the listener a slow step begins, with this host's estimate; returns when it began. */
  #step(stage: GrantStage, subject: StageSubject, onStep: GrantStepListener | undefined): number {
    const startedAtMs = this.#options.clock.now();
    const device = { platform: subject.platform, model: subject.model, os: subject.os };
    onStep?.({
      stage,
      startedAtMs,
      device,
      estimate: this.#options.timings.estimate(stage, device),
    });
    return startedAtMs;
  }

  #driverDevice(id: string): DriverDevice {
    const device = this.#options.inventory.driverDevice(id);
    if (device === undefined) throw new Error(`device ${id} is not in the inventory`);
    return device;
  }
}

// The device as the Lease's status names it; an absent class stays absent, so the written status
// equals what the agent reads back when it adopts a grant after a restart.
export function grantedDevice(device: PlannedDevice): GrantedDevice {
  return {
    id: device.id,
    name: device.name,
    model: device.model,
    platform: device.platform,
    os: device.os,
    ...(device.class ? { class: device.class } : {}),
    physical: device.physical,
  };
}

/** The name a new device gets: simlock's, its model, a short random id ("simlock-iphone-16-3fa2c1"). */
export function deviceName(model: string): string {
  const slug = model
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 40);
  return `simlock-${slug || 'device'}-${randomBytes(3).toString('hex')}`;
}
