// Quarantined devices are tried again (quarantine-plan.ts says when): a retry shuts the device
// down if it runs, boots it, and runs the driver's per-device check when it has one (else the boot
// alone is the test); a device that passes is back in the pool, warm. One that fails waits for
// its next backoff; with its retries used up, a device the agent made is deleted (a new one is
// made on demand) and any other waits for an operator, who ends the quarantine with
// `kubectl simlock device unquarantine` or the console (the Worker's spec.unquarantine, read by
// cluster/unquarantine-watch.ts). A retry and an unquarantine choose their device among the grant
// decisions (LeaseGranter.decide) and hold it before anything is awaited, so neither ever races a
// grant; a retry boots only where a running slot is free without evicting anything.
import type { Clock, Logger, TimerHandle } from '../runtime/index.js';
import type { Limits } from './config.js';
import type { Driver } from './drivers/driver.js';
import type { LeaseGranter } from './granter.js';
import type { Inventory } from './inventory.js';
import { findRoom } from './planner.js';
import {
  afterFailedRetry,
  endsQuarantine,
  firstRetry,
  nextDue,
  type QuarantineSettings,
} from './quarantine-plan.js';

/** A retry due while the host has no free running slot is put off by this long. */
export const NO_ROOM_DELAY_MS = 60_000;

export interface QuarantineRetrierOptions {
  driver: Driver;
  inventory: Inventory;
  granter: Pick<LeaseGranter, 'decide'>;
  clock: Clock;
  limits: Limits;
  settings: QuarantineSettings;
  logger: Logger;
  /** A device is back in service (a retry passed, an operator ended its quarantine). */
  onReturned?: () => void;
}

/** What an operator's unquarantine did. */
export type UnquarantineOutcome =
  /** The device is back in service (shut down first if it ran). */
  | 'ended'
  /** A retry runs now: it ends the quarantine if it passes, and the request does if it fails. */
  | 'after-retry'
  /** Not quarantined here, or quarantined again since the request. */
  | 'not-quarantined';

export class QuarantineRetrier {
  readonly #options: QuarantineRetrierOptions;
  #timer: TimerHandle | undefined;
  #timerDueAt: number | undefined;
  #running = false;
  #unsubscribe: (() => void) | undefined;
  /** Retries running, by device. */
  readonly #retries = new Map<string, Promise<void>>();
  /** Unquarantines asked while a retry ran: when each was asked. */
  readonly #askedDuringRetry = new Map<string, number>();

  constructor(options: QuarantineRetrierOptions) {
    this.#options = options;
    options.inventory.setQuarantinePolicy((device, sinceMs) =>
      firstRetry(sinceMs, device?.physical ?? false, options.settings),
    );
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#unsubscribe = this.#options.inventory.changes.add(() => this.#arm());
    this.#arm();
  }

  stop(): void {
    this.#running = false;
    this.#unsubscribe?.();
    this.#clearTimer();
  }

  /** The retries running now, settled (tests wait on them). */
  async idle(): Promise<void> {
    while (this.#retries.size > 0) await Promise.all(this.#retries.values());
  }

  /** Sets the timer for the earliest retry due (inventory changes call it: cheap when unchanged). */
  #arm(): void {
    if (!this.#running) return;
    const { inventory, clock } = this.#options;
    const due = nextDue(inventory.quarantines().map(([, record]) => record));
    if (due === this.#timerDueAt) return;
    this.#clearTimer();
    if (due === undefined) return;
    this.#timerDueAt = due;
    this.#timer = clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerDueAt = undefined;
        void this.retryDue();
      },
      Math.max(0, due - clock.now()),
    );
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDueAt = undefined;
  }

  /** Starts every retry due now; resolves once they are done. */
  async retryDue(): Promise<void> {
    const { inventory, granter, clock, limits } = this.#options;
    const chosen = await granter.decide(() => {
      const now = clock.now();
      const picked: string[] = [];
      for (const [id, record] of inventory.quarantines()) {
        if (record.retrying === true || record.nextRetryAtMs === undefined) continue;
        if (record.nextRetryAtMs > now) continue;
        const devices = inventory.devices(() => undefined);
        const device = devices.find((entry) => entry.id === id);
        if (device === undefined || device.physical) continue;
        const room = findRoom(device, devices, limits);
        if ('reason' in room || room.evict.length > 0) {
          inventory.updateQuarantine(id, { nextRetryAtMs: now + NO_ROOM_DELAY_MS });
          continue;
        }
        // Held now: it counts as booting (a running slot) and no grant can take it.
        inventory.updateQuarantine(id, { retrying: true, nextRetryAtMs: undefined });
        picked.push(id);
      }
      return picked;
    });
    await Promise.all(
      chosen.map((id) => {
        const retry = this.#retry(id).finally(() => this.#retries.delete(id));
        this.#retries.set(id, retry);
        return retry;
      }),
    );
  }

  async #retry(id: string): Promise<void> {
    const { inventory, driver, logger } = this.#options;
    const attempt = (inventory.quarantineRecord(id)?.retries ?? 0) + 1;
    try {
      const device = inventory.driverDevice(id);
      if (device === undefined) return;
      if (device.power !== 'shutdown') {
        await driver.shutdown(device);
        inventory.setPower(id, 'shutdown');
      }
      await driver.boot(device);
      inventory.setPower(id, 'booted');
      await driver.checkDevice?.(inventory.driverDevice(id) ?? device);
    } catch (error) {
      await this.#failed(id, attempt, (error as Error).message);
      return;
    }
    this.#askedDuringRetry.delete(id);
    // Gone meanwhile (the tools no longer list it): nothing is held any more.
    if (inventory.quarantineRecord(id)?.retrying !== true) return;
    inventory.hold(id, undefined);
    logger.info('a quarantined device passed its retry; back in service', { device: id, attempt });
    this.#options.onReturned?.();
  }

  async #failed(id: string, attempt: number, failure: string): Promise<void> {
    const { inventory, driver, clock, settings, logger } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined || inventory.quarantineRecord(id) === undefined) return;
    if (device.power !== 'shutdown') {
      // Best effort: a device that would not boot may be half up; the next retry shuts it down too.
      await driver.shutdown(device).then(
        () => inventory.setPower(id, 'shutdown'),
        (error: unknown) =>
          logger.warn('could not shut down a device after its failed retry', { device: id, error }),
      );
    }
    const owned = device.deletable === true && driver.delete !== undefined;
    const next = afterFailedRetry(attempt, clock.now(), owned, settings);
    logger.warn('a quarantined device failed its retry', {
      device: id,
      attempt,
      failure,
      next: next.kind,
    });
    const asked = this.#askedDuringRetry.get(id);
    this.#askedDuringRetry.delete(id);
    inventory.updateQuarantine(id, {
      retrying: undefined,
      retries: attempt,
      lastFailure: failure.slice(0, 200),
      ...(next.kind === 'retry-later'
        ? { nextRetryAtMs: next.nextRetryAtMs }
        : { waitsForOperator: true }),
    });
    if (asked !== undefined) {
      await this.unquarantine(id, asked);
      return;
    }
    if (next.kind === 'delete') await this.#delete(id, attempt);
  }

  /** Retries used up on a device the agent made: it goes; the planner makes a new one on demand. */
  async #delete(id: string, attempts: number): Promise<void> {
    const { inventory, driver, logger } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined || driver.delete === undefined) return;
    // Still held quarantined since the retry was chosen: no grant can have taken it meanwhile.
    inventory.hold(id, 'deleting');
    try {
      await driver.delete(device);
      inventory.deleted(id);
      logger.info('deleted a device it made after its quarantine retries failed', {
        device: id,
        model: device.model,
        retries: attempts,
      });
    } catch (error) {
      inventory.quarantine(id, `delete after ${attempts} failed retries failed: ${String(error)}`);
      inventory.updateQuarantine(id, {
        retries: attempts,
        nextRetryAtMs: undefined,
        waitsForOperator: true,
      });
      logger.warn('could not delete a device after its failed retries', { device: id, error });
    }
  }

  /**
   * Ends a quarantine begun before `askedAtMs` (an operator's spec.unquarantine entry): the device
   * is shut down if it runs, then free for grants, its retries forgotten. A physical device is
   * free at once. A quarantine begun after the request is left alone.
   */
  async unquarantine(id: string, askedAtMs: number): Promise<UnquarantineOutcome> {
    const { inventory, granter, driver, logger } = this.#options;
    // Most calls (every Worker update re-reads the whole list) concern no quarantined device.
    const before = inventory.quarantineRecord(id);
    if (before === undefined || !endsQuarantine(before.sinceMs, askedAtMs)) {
      return 'not-quarantined';
    }
    const decided = await granter.decide(() => {
      const record = inventory.quarantineRecord(id);
      if (record === undefined || !endsQuarantine(record.sinceMs, askedAtMs)) {
        return 'not-quarantined' as const;
      }
      if (record.retrying === true) {
        this.#askedDuringRetry.set(id, askedAtMs);
        return 'after-retry' as const;
      }
      const device = inventory.driverDevice(id);
      if (device === undefined || device.physical || device.power === 'shutdown') {
        inventory.hold(id, undefined);
        return 'ended' as const;
      }
      // Held while it shuts down: no grant takes it before it is down.
      inventory.hold(id, 'reclaiming');
      return { shutDown: device };
    });
    if (typeof decided === 'string') {
      if (decided === 'ended') {
        logger.info('an operator ended a quarantine', { device: id });
        this.#options.onReturned?.();
      }
      return decided;
    }
    try {
      await driver.shutdown(decided.shutDown);
      inventory.setPower(id, 'shutdown');
      inventory.hold(id, undefined);
      logger.info('an operator ended a quarantine; the device is shut down and free', {
        device: id,
      });
      this.#options.onReturned?.();
    } catch (error) {
      inventory.quarantine(id, `shutdown after unquarantine failed: ${(error as Error).message}`);
      logger.warn('could not shut down an unquarantined device; quarantined again', {
        device: id,
        error,
      });
    }
    return 'ended';
  }
}
