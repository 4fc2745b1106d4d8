// Taking a lease's device back (the granter's reclaim, after its record is gone): the lease's tools
// stopped, then the device reset (a phone), or erased, shut down or booted again per `reclaim`. A
// simulator or emulator does it as the device machine's moves (leased --leaseEnded--> reclaiming,
// answered reclaimed or reclaimFailed: device-steps.ts); a phone keeps its own rules (the
// inventory's holdPhysical). A reclaim that fails quarantines the device.
import type { Logger } from '../runtime/index.js';
import type { ReclaimPolicy } from './config.js';
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
  // The device vanished from the host during the lease (the machine's listedGone took it).
  if (device === undefined) return 'not-leased';
  if (!device.physical) {
    // leased --leaseEnded--> reclaiming, only on the device of this very lease.
    const life = steps.lifeOf(device.id);
    const step =
      life?.lease === record.leaseId
        ? steps.take(device.id, { type: 'leaseEnded', reclaim: context.reclaim })
        : { refused: `the device is not held for ${record.leaseId}` };
    if ('refused' in step) {
      logger.warn('nothing to reclaim for an ended lease', {
        device: device.id,
        lease: record.leaseId,
        refused: step.refused,
      });
      return 'not-leased';
    }
    steps.write(device.id, step.state);
  } else {
    inventory.holdPhysical(device.id, 'reclaiming');
  }
  try {
    await execsStopped;
    const outcome = await reclaimDevice(context, device, record);
    if (device.physical) inventory.holdPhysical(device.id, undefined);
    else steps.answer(device.id, { type: 'reclaimed', booted: outcome === 'ready' });
    return outcome;
  } catch (error) {
    const message = (error as Error).message;
    logger.warn('reclaim failed; device quarantined', {
      device: device.id,
      lease: record.leaseId,
      error: message,
    });
    const why = `reclaim failed: ${message}`;
    if (device.physical) {
      inventory.holdPhysical(device.id, 'quarantined');
      inventory.startQuarantine(device.id, why);
    } else {
      steps.answer(device.id, { type: 'reclaimFailed' }, why);
    }
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
