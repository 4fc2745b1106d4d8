// Quarantined devices are tried again (quarantine-plan.ts says when): a retry shuts the device
// down if it runs, boots it, and runs the driver's per-device check when it has one (else the boot
// alone is the test); a device that passes is back in the pool, warm. One that fails waits for
// its next backoff; with its retries used up, a device the agent made is deleted (a new one is
// made on demand) and any other waits for an operator, who ends the quarantine with
// `kubectl simlock device unquarantine` or the console (the Worker's spec.unquarantine, read by
// cluster/unquarantine-watch.ts). Each step is a move of the device machine (device-steps.ts:
// quarantineRetry, retryPassed, retryFailed, retriesExhausted, unquarantine, stopped, deleted and
// their failures): a retry and an unquarantine are taken among the grant decisions
// (LeaseGranter.decide) and hold the device before anything is awaited, so neither ever races a
// grant; a retry boots only where a running slot is free without evicting anything. Physical
// devices keep their own rules (an unquarantine frees one at once).
import type { Clock, Logger, TimerHandle } from '../runtime/index.js';
import type { Limits } from './config.js';
import type { DeviceLife } from './device-machine.js';
import type { DeviceSteps, TakenStep } from './device-steps.js';
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
  /** The device machine's shell: every step of a quarantine is its move. */
  steps: DeviceSteps;
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
    const { inventory, granter, clock, limits, steps } = this.#options;
    const chosen = await granter.decide(() => {
      const now = clock.now();
      const picked: [string, TakenStep][] = [];
      for (const [id, record] of inventory.quarantines()) {
        // A retry running, or one waiting for an operator, has none due.
        if (record.nextRetryAtMs === undefined || record.nextRetryAtMs > now) continue;
        const devices = inventory.devices(() => undefined);
        const device = devices.find((entry) => entry.id === id);
        if (device === undefined || device.physical) continue;
        const room = findRoom(device, devices, limits);
        if ('reason' in room || room.evict.length > 0) {
          inventory.updateQuarantine(id, { nextRetryAtMs: now + NO_ROOM_DELAY_MS });
          continue;
        }
        const step = steps.take(id, { type: 'quarantineRetry' });
        if ('refused' in step) continue;
        // Held now: it counts as booting (a running slot) and no grant can take it.
        steps.write(id, step.state);
        picked.push([id, step]);
      }
      return picked;
    });
    await Promise.all(
      chosen.map(([id, step]) => {
        const retry = this.#retry(id, step).finally(() => this.#retries.delete(id));
        this.#retries.set(id, retry);
        return retry;
      }),
    );
  }

  /** The retry's effects (boot, health check; a device still running is shut down first). */
  async #retry(id: string, step: TakenStep): Promise<void> {
    const { inventory, driver, logger, steps } = this.#options;
    const attempt = (inventory.quarantineRecord(id)?.retries ?? 0) + 1;
    try {
      const device = inventory.driverDevice(id);
      if (device === undefined) return;
      for (const effect of step.effects) {
        if (effect.type === 'boot') {
          if (device.power !== 'shutdown') {
            await driver.shutdown(device);
            inventory.setPower(id, 'shutdown');
          }
          await driver.boot(device);
          inventory.setPower(id, 'booted');
        } else if (effect.type === 'healthCheck') {
          await driver.checkDevice?.(inventory.driverDevice(id) ?? device);
        }
      }
    } catch (error) {
      await this.#failed(id, step.state, attempt, (error as Error).message);
      return;
    }
    this.#askedDuringRetry.delete(id);
    // Gone meanwhile (the tools no longer list it): the machine refuses the answer.
    if (steps.answer(id, { type: 'retryPassed' }) === undefined) return;
    logger.info('a quarantined device passed its retry; back in service', { device: id, attempt });
    this.#options.onReturned?.();
  }

  async #failed(id: string, from: DeviceLife, attempt: number, failure: string): Promise<void> {
    const { inventory, driver, clock, settings, logger, steps } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined || inventory.quarantineRecord(id) === undefined) return;
    const next = afterFailedRetry(attempt, clock.now(), from.owned, settings);
    const asked = this.#askedDuringRetry.get(id);
    this.#askedDuringRetry.delete(id);
    // An operator who asked meanwhile has the last word: the device stays to be unquarantined.
    const exhausted = next.kind !== 'retry-later' && asked === undefined;
    const answer = steps.take(id, { type: exhausted ? 'retriesExhausted' : 'retryFailed' });
    if ('refused' in answer) return;
    if (device.power !== 'shutdown') {
      // Best effort (the row's shutdown): a device that would not boot may be half up; the next
      // retry shuts it down too.
      await driver.shutdown(device).then(
        () => inventory.setPower(id, 'shutdown'),
        (error: unknown) =>
          logger.warn('could not shut down a device after its failed retry', { device: id, error }),
      );
    }
    logger.warn('a quarantined device failed its retry', {
      device: id,
      attempt,
      failure,
      next: next.kind,
    });
    // Still retrying while it shut down (a running slot); now the answer's life. The record
    // keeps the count and the failure; scheduleRetry is the next retry's time.
    if (steps.lifeOf(id)?.kind !== 'retrying') return; // gone from the host meanwhile
    inventory.batch(() => {
      inventory.updateQuarantine(id, {
        retries: attempt,
        lastFailure: failure.slice(0, 200),
        ...(next.kind === 'retry-later' ? { nextRetryAtMs: next.nextRetryAtMs } : {}),
      });
      steps.write(id, answer.state);
    });
    if (asked !== undefined) {
      await this.unquarantine(id, asked);
      return;
    }
    if (answer.state.kind === 'deleting') await this.#delete(id, attempt);
  }

  /** Retries used up on a device the agent made: it goes; the planner makes a new one on demand. */
  async #delete(id: string, attempts: number): Promise<void> {
    const { inventory, driver, logger, steps } = this.#options;
    const device = inventory.driverDevice(id);
    if (device === undefined || driver.delete === undefined) return;
    // Held since the retry was chosen (retrying, then deleting): no grant can have taken it.
    let failure: unknown;
    try {
      await driver.delete(device);
    } catch (error) {
      failure = error;
    }
    const answer = steps.answer(
      id,
      { type: failure === undefined ? 'deleted' : 'deleteFailed' },
      `delete after ${attempts} failed retries failed: ${String(failure)}`,
    );
    if (answer === undefined) return;
    if (failure === undefined) {
      logger.info('deleted a device it made after its quarantine retries failed', {
        device: id,
        model: device.model,
        retries: attempts,
      });
    } else {
      inventory.updateQuarantine(id, { retries: attempts });
      logger.warn('could not delete a device after its failed retries', {
        device: id,
        error: failure,
      });
    }
  }

  /**
   * Ends a quarantine begun before `askedAtMs` (an operator's spec.unquarantine entry): the device
   * is shut down if it runs, then free for grants, its retries forgotten. A physical device is
   * free at once. A quarantine begun after the request is left alone.
   */
  async unquarantine(id: string, askedAtMs: number): Promise<UnquarantineOutcome> {
    const { inventory, granter, driver, logger, steps } = this.#options;
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
      const device = inventory.driverDevice(id);
      if (device === undefined) return 'not-quarantined' as const;
      if (device.physical) {
        // Not the machine's: a phone is free at once.
        inventory.holdPhysical(id, undefined);
        return 'ended' as const;
      }
      const step = steps.take(id, { type: 'unquarantine' });
      if ('refused' in step) {
        // Retrying: the retry ends the quarantine if it passes, and this request does if it fails.
        this.#askedDuringRetry.set(id, askedAtMs);
        return 'after-retry' as const;
      }
      // Held while it shuts down (cancelRetry: its record goes): no grant takes it before it is
      // down. One already down is answered at once.
      steps.write(id, step.state);
      if (device.power === 'shutdown') {
        steps.answer(id, { type: 'stopped' });
        return 'ended' as const;
      }
      return { shutDown: device };
    });
    if (typeof decided === 'string') {
      if (decided === 'ended') {
        logger.info('an operator ended a quarantine', { device: id });
        this.#options.onReturned?.();
      }
      return decided;
    }
    let failure: unknown;
    try {
      await driver.shutdown(decided.shutDown);
      inventory.setPower(id, 'shutdown');
    } catch (error) {
      failure = error;
    }
    steps.answer(
      id,
      { type: failure === undefined ? 'stopped' : 'stopFailed' },
      `shutdown after unquarantine failed: ${(failure as Error | undefined)?.message}`,
    );
    if (failure === undefined) {
      logger.info('an operator ended a quarantine; the device is shut down and free', {
        device: id,
      });
      this.#options.onReturned?.();
    } else {
      logger.warn('could not shut down an unquarantined device; quarantined again', {
        device: id,
        error: failure,
      });
    }
    return 'ended';
  }
}
