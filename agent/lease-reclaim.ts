// Taking a lease's device back (the granter's reclaim, after its record is gone): the lease's tools
// stopped, then the device reset (a phone), or erased, shut down or booted again per `reclaim`. A
// simulator or emulator does it as the device machine's moves (leased --leaseEnded--> reclaiming,
// answered reclaimed or reclaimFailed: device-steps.ts); a phone keeps its own rules. A reclaim
// that fails quarantines the device.
import type { Logger } from '../runtime/index.js';
import type { ReclaimPolicy } from './config.js';
import type { DeviceLife } from './device-machine.js';
import type { DeviceSteps } from './device-steps.js';
import type { Driver, DriverDevice } from './drivers/driver.js';
import type { LeaseRecord, ReclaimOutcome } from './granter.js';
import type { Inventory } from './inventory.js';

export interface LeaseReclaimContext {
  driver: Driver;
  inventory: Inventory;
  reclaim: ReclaimPolicy;
  steps: DeviceSteps;
  logger: Logger;
}

/**
 * Reclaims the device of a lease that just ended; `execsStopped` settles once its tools are gone.
 * Everything up to the first await runs at once: the device is reclaiming when this returns.
 */
export async function reclaimLeaseDevice(
  context: LeaseReclaimContext,
  record: LeaseRecord,
  execsStopped: Promise<void> | undefined,
): Promise<ReclaimOutcome> {
  const { inventory, steps, logger } = context;
  const device = inventory.driverDevice(record.device.id);
  if (device === undefined) {
    // The device vanished from the host during the lease; nothing to reclaim.
    inventory.hold(record.device.id, undefined);
    return 'not-leased';
  }
  // The granter's record says the lease held it: the machine takes the lease's end from leased.
  let life: DeviceLife | undefined;
  if (!device.physical) {
    const step = steps.take(
      device.id,
      { type: 'leaseEnded', reclaim: context.reclaim },
      { ...(steps.lifeOf(device.id) ?? { owned: false }), kind: 'leased', lease: record.leaseId },
    );
    if (!('refused' in step)) life = step.state;
  }
  if (life === undefined) inventory.hold(device.id, 'reclaiming');
  else steps.write(device.id, life);
  try {
    await execsStopped;
    const outcome = await reclaimDevice(context, device, record);
    if (life === undefined) inventory.hold(device.id, undefined);
    else steps.answer(device.id, life, { type: 'reclaimed', booted: outcome === 'ready' });
    return outcome;
  } catch (error) {
    const message = (error as Error).message;
    logger.warn('reclaim failed; device quarantined', {
      device: device.id,
      lease: record.leaseId,
      error: message,
    });
    const why = `reclaim failed: ${message}`;
    if (life === undefined) inventory.quarantine(device.id, why);
    else steps.answer(device.id, life, { type: 'reclaimFailed' }, why);
    return 'quarantined';
  }
}

async function reclaimDevice(
  context: LeaseReclaimContext,
  device: DriverDevice,
  record: LeaseRecord,
): Promise<ReclaimOutcome> {
  const { driver, inventory, reclaim } = context;
  if (device.physical) {
    await driver.reset(device, record.baseline);
    return 'ready';
  }
  if (reclaim === 'shutdown') {
    await driver.shutdown(device);
    inventory.setPower(device.id, 'shutdown');
    return 'shut-down';
  }
  await driver.erase(device);
  inventory.setPower(device.id, 'shutdown');
  if (reclaim === 'erase') return 'shut-down';
  await driver.boot(device);
  inventory.setPower(device.id, 'booted');
  return 'ready';
}
