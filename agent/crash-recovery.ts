// Crash recovery under the same lease (issue 34): a leased simulator or emulator that the tools
// list shut down (a simulator that went Shutdown; an emulator whose process exited, its serial
// gone from `adb devices`), or whose driver check (`checkDevice`) fails on the probe interval, has
// crashed. Within its crash budget (crash-budget.ts) it is shut down and booted again while the
// lease stays Granted, and the holder is told (`news`: the cluster agent writes it on the Lease);
// past it, or when it will not boot again, the lease ends LEASE_LOST and the device is quarantined.
// Physical devices are not watched here (presence.ts shows them absent).
//
// The machine: each crash and its answer are steps of the device machine (device-machine.ts,
// rows leased→recovering→leased, leased→quarantined, recovering→quarantined) taken through its
// shell (device-steps.ts), and the effects it answers are carried out here in its order. The
// device's life ('recovering' included) is the inventory's, as every device's: the planner and the
// view count a recovering device leased, so no grant and no idle sweep can take it, and the granter
// keeps the lease's record. Here is only what the holder is told (`health`, per lease). A lease
// whose device the tools no longer list (the machine's listedGone) is lost here too (`lost`).
import type { Condition, DeviceRecovery } from '../api/index.js';
import { silentLogger, type Clock, type Logger } from '../runtime/index.js';
import { crashBudget, DEFAULT_CRASH_RULE, type CrashRule } from './crash-budget.js';
import {
  backIn,
  downCause,
  recoveringCondition,
  windowText,
  type LeaseDeviceHealth,
} from './device-health.js';
import type { DeviceEffect, DeviceEvent, DeviceLife } from './device-machine.js';
import type { DeviceSteps } from './device-steps.js';
import type { Driver, ExecPlan } from './drivers/driver.js';
import type { LeaseGranter, LeaseRecord } from './granter.js';
import type { Inventory } from './inventory.js';
import { Listeners } from './listeners.js';
import type { RunningExecs } from './running-execs.js';
import type { StageTimings } from './stage-timings.js';

export interface CrashRecoveryOptions {
  driver: Driver;
  inventory: Inventory;
  granter: LeaseGranter;
  /** The device machine's shell: each crash and its answer are its moves. */
  steps: DeviceSteps;
  execs: RunningExecs;
  timings: StageTimings;
  clock: Clock;
  /** Lists the devices again: a failed check on a device the tools now list down says so. */
  relist?: () => Promise<void>;
  rule?: CrashRule;
  logger?: Logger;
}

/** A lease whose device crashed at least once (or is gone). */
interface Watched {
  deviceId: string;
  health: LeaseDeviceHealth;
  /** The recovery in progress: settles when the device is back, or the lease is lost. */
  settled?: Promise<void>;
}

export class CrashRecovery {
  /** A lease whose health changed (recovering, recovered, lost): write it on its Lease. */
  readonly news = new Listeners<{ leaseId: string }>();
  readonly #options: CrashRecoveryOptions;
  readonly #rule: CrashRule;
  readonly #logger: Logger;
  readonly #watched = new Map<string, Watched>();
  /** Crash times per device, within the window (crashBudget's history). */
  readonly #crashes = new Map<string, number[]>();
  /** Crashes counted per device, ever: a check that fails is judged only if none came meanwhile. */
  readonly #counted = new Map<string, number>();
  #probing = false;

  constructor(options: CrashRecoveryOptions) {
    this.#options = options;
    this.#rule = options.rule ?? DEFAULT_CRASH_RULE;
    this.#logger = options.logger ?? silentLogger;
  }

  /** What the Lease should say about its device, if it ever crashed under this lease. */
  healthOf(leaseId: string): LeaseDeviceHealth | undefined {
    return this.#watched.get(leaseId)?.health;
  }

  /** Whether the lease's device is being booted again now. */
  recovering(leaseId: string): boolean {
    const watched = this.#watched.get(leaseId);
    return watched !== undefined && this.#lifeOf(watched.deviceId, leaseId)?.kind === 'recovering';
  }

  /** Resolves once a recovery in progress settled (at once when there is none). */
  async settled(leaseId: string): Promise<void> {
    await this.#watched.get(leaseId)?.settled;
  }

  /** The lease ended and its device was reclaimed: nothing more to tell about it. */
  forget(leaseId: string): void {
    if (!this.recovering(leaseId)) this.#watched.delete(leaseId);
  }

  /** An exec asked while the device is booted again: refused at once, saying when it is back. */
  execRefusal(leaseId: string): ExecPlan | undefined {
    const watched = this.#watched.get(leaseId);
    const recovery = watched?.health.recovery;
    if (watched === undefined || !recovery || !this.recovering(leaseId)) return undefined;
    const name = this.#options.inventory.driverDevice(watched.deviceId)?.name ?? watched.deviceId;
    return {
      ok: false,
      code: 'UNAVAILABLE',
      message: `device ${name} is restarting after a crash; ${this.#backIn(recovery)}`,
    };
  }

  /** After a listing: a leased virtual device the tools list shut down has crashed (header). */
  checkListing(): void {
    for (const record of this.#watchable()) {
      const device = this.#options.inventory.driverDevice(record.device.id);
      if (device?.power === 'shutdown') this.crashed(record.leaseId, downCause(device.platform));
    }
  }

  /** On the probe interval: the driver's check on each leased virtual device (if it has one). */
  async probe(): Promise<void> {
    const { driver, inventory } = this.#options;
    if (this.#probing || driver.checkDevice === undefined) return;
    this.#probing = true;
    try {
      await Promise.all(
        this.#watchable().map(async (record) => {
          const device = inventory.driverDevice(record.device.id);
          // Not booted by the listing: checkListing answers it (or it is on its way up).
          if (device?.power !== 'booted') return;
          const countedBefore = this.#counted.get(device.id) ?? 0;
          try {
            await driver.checkDevice?.(device);
          } catch (error) {
            // Listed again first: a device the tools now list down crashed that way, not a check.
            await this.#options.relist?.().catch(() => undefined);
            // A crash counted while it ran (the listing's, booted again since): told already.
            if ((this.#counted.get(device.id) ?? 0) !== countedBefore) return;
            const now = inventory.driverDevice(record.device.id);
            this.crashed(
              record.leaseId,
              now?.power === 'shutdown'
                ? downCause(now.platform)
                : `health check failed: ${(error as Error).message}`,
            );
          }
        }),
      );
    } finally {
      this.#probing = false;
    }
  }

  /**
   * The device of a lease crashed (`cause`: what was seen). Counted with its earlier crashes: the
   * machine then boots it again under the lease, or ends the lease and quarantines it. A crash
   * seen again while it is being booted again is not counted twice.
   */
  crashed(leaseId: string, cause: string): void {
    const { granter, clock } = this.#options;
    const record = granter.lease(leaseId);
    if (record === undefined || record.device.physical) return;
    // A device no longer listed at all is the machine's listedGone, not a crash (`lost`).
    if (this.#lifeOf(record.device.id, leaseId)?.kind !== 'leased') return;
    this.#counted.set(record.device.id, (this.#counted.get(record.device.id) ?? 0) + 1);
    const watched = this.#watched.get(leaseId) ?? {
      deviceId: record.device.id,
      health: { recovery: null },
    };
    const now = clock.now();
    const verdict = crashBudget(this.#crashes.get(record.device.id) ?? [], now, this.#rule);
    this.#crashes.set(record.device.id, verdict.history);
    const crashes = verdict.history.length;
    this.#watched.set(leaseId, watched);
    this.#logger.warn('a leased device crashed', {
      lease: leaseId,
      device: record.device.id,
      cause,
      crashes,
      budget: this.#rule.limit,
    });
    if (verdict.event === 'crashed') {
      const estimate = this.#options.timings.estimate('booting', record.device).ms;
      watched.health = {
        ...watched.health,
        recovery: {
          since: new Date(now).toISOString(),
          cause: cause.slice(0, 256),
          crashes,
          crashBudget: this.#rule.limit,
          ...(estimate !== undefined
            ? { estimatedSeconds: Math.max(1, Math.ceil(estimate / 1000)) }
            : {}),
        },
      };
    }
    const reason = `crashed ${crashes} times in ${windowText(this.#rule)}`;
    watched.settled = this.#step(watched, record, { type: verdict.event }, reason).catch(
      (error: unknown) =>
        this.#logger.error('crash recovery failed', { lease: leaseId, error: String(error) }),
    );
  }

  // --- the machine's steps and their effects ---

  /**
   * The lease's device is gone from the host (the machine's listedGone, already taken): the row's
   * effects (its tools stopped, the lease lost) are carried out, and the holder told.
   */
  lost(leaseId: string, effects: readonly DeviceEffect[]): void {
    const record = this.#options.granter.lease(leaseId);
    if (record === undefined) return;
    const watched = this.#watched.get(leaseId) ?? {
      deviceId: record.device.id,
      health: { recovery: null },
    };
    this.#watched.set(leaseId, watched);
    const carried = async () => {
      for (const effect of effects) {
        await this.#carryOut(effect, watched, record, 'is gone from the host', true);
      }
    };
    watched.settled = carried().catch((error: unknown) =>
      this.#logger.error('losing a lease failed', { lease: leaseId, error: String(error) }),
    );
  }

  /** Takes one event through the machine, carries out its effects, and the event they end in. */
  async #step(
    watched: Watched,
    record: LeaseRecord,
    event: DeviceEvent,
    quarantineReason: string,
  ): Promise<void> {
    const { steps } = this.#options;
    const step = steps.take(watched.deviceId, event);
    if ('refused' in step) {
      this.#logger.warn('device event refused', { lease: record.leaseId, refused: step.refused });
      return;
    }
    // Written first, before anything is awaited (a quarantine with its reason): no grant can take
    // the device meanwhile.
    steps.write(watched.deviceId, step.state, quarantineReason);
    const losing = step.state.kind !== 'recovering';
    let booted: { ok: true; ms: number } | { ok: false; error: string } | undefined;
    for (const effect of step.effects) {
      const result = await this.#carryOut(effect, watched, record, quarantineReason, losing);
      if (result !== undefined) booted = result;
    }
    if (booted === undefined) return;
    if (booted.ok) {
      await this.#step(watched, record, { type: 'recovered' }, quarantineReason);
    } else {
      await this.#step(
        watched,
        record,
        { type: 'bootFailed' },
        `would not boot again after a crash: ${booted.error}`,
      );
    }
  }

  async #carryOut(
    effect: DeviceEffect,
    watched: Watched,
    record: LeaseRecord,
    why: string,
    losing: boolean,
  ): Promise<{ ok: true; ms: number } | { ok: false; error: string } | undefined> {
    const { driver, inventory, execs, granter, clock, timings } = this.#options;
    const { leaseId } = record;
    const name = record.device.name;
    switch (effect.type) {
      case 'stopExecs': {
        // Its tools cannot go on: the device under them is gone. While it is booted again the
        // lease goes on, so they end UNAVAILABLE; when the lease is lost, LEASE_LOST.
        await execs.stopLease(
          leaseId,
          losing
            ? { code: 'LEASE_LOST', message: `lease ${leaseId} is lost: its device ${name} ${why}` }
            : { code: 'UNAVAILABLE', message: `device ${name} crashed; it is being booted again` },
        );
        return undefined;
      }
      case 'tellRecovering': {
        const recovery = watched.health.recovery;
        const back = recovery ? this.#backIn(recovery) : 'back soon';
        watched.health = {
          ...watched.health,
          condition: this.#condition(
            'True',
            'DeviceCrashed',
            `the device stopped (${recovery?.cause ?? 'crashed'}); booting it again, ${back}`,
          ),
        };
        this.news.emit({ leaseId });
        return undefined;
      }
      case 'shutdown': {
        const device = inventory.driverDevice(watched.deviceId);
        if (device === undefined) return undefined;
        try {
          await driver.shutdown(device);
          inventory.setPower(device.id, 'shutdown');
        } catch (error) {
          // The boot that follows says whether the device can still be used.
          this.#logger.warn('shutting a crashed device down failed', {
            device: device.id,
            error: (error as Error).message,
          });
        }
        return undefined;
      }
      case 'boot': {
        const device = inventory.driverDevice(watched.deviceId);
        if (device === undefined) return { ok: false, error: 'it is gone from the host' };
        const startedAt = clock.now();
        try {
          await driver.boot(device);
        } catch (error) {
          return { ok: false, error: (error as Error).message };
        }
        const ms = clock.now() - startedAt;
        timings.record('booting', record.device, ms);
        inventory.setPower(device.id, 'booted');
        return { ok: true, ms };
      }
      case 'tellRecovered': {
        const since = watched.health.recovery?.since;
        const seconds = since ? Math.round((clock.now() - Date.parse(since)) / 1000) : 0;
        watched.health = {
          recovery: null,
          condition: this.#condition('False', 'DeviceRecovered', `booted again after ${seconds} s`),
        };
        this.#logger.info('a crashed device is back under its lease', { lease: leaseId, seconds });
        this.news.emit({ leaseId });
        return undefined;
      }
      case 'endLease': {
        granter.lose(leaseId);
        const gone = this.#lifeOf(watched.deviceId) === undefined;
        const lost = `the device ${name} ${why}; ${gone ? '' : 'it is quarantined and '}the lease is lost`;
        watched.health = {
          recovery: null,
          ...(watched.health.condition
            ? { condition: this.#condition('False', 'DeviceCrashed', lost) }
            : {}),
          lost,
        };
        const said = gone
          ? 'a lease is lost: its device is gone'
          : 'a lease is lost: its device crashed';
        this.#logger.warn(said, { lease: leaseId, why });
        this.news.emit({ leaseId });
        return undefined;
      }
      case 'scheduleRetry':
        // The quarantine's retries (boot, health check, backoff) belong to the quarantine.
        return undefined;
      default:
        this.#logger.warn('device effect not carried out by crash recovery', {
          lease: leaseId,
          effect: effect.type,
        });
        return undefined;
    }
  }

  // --- helpers ---

  /** Fleet and local leases on virtual devices, leased (not being recovered). */
  #watchable(): LeaseRecord[] {
    return this.#options.granter
      .leases()
      .filter(
        (record) =>
          !record.device.physical &&
          this.#lifeOf(record.device.id, record.leaseId)?.kind === 'leased',
      );
  }

  /** The device's life, if it serves `leaseId` (any life, without it). */
  #lifeOf(deviceId: string, leaseId?: string): DeviceLife | undefined {
    const life = this.#options.steps.lifeOf(deviceId);
    return leaseId === undefined || life?.lease === leaseId ? life : undefined;
  }

  #backIn(recovery: DeviceRecovery): string {
    return backIn(recovery, this.#options.clock.now());
  }

  #condition(
    status: 'True' | 'False',
    reason: 'DeviceCrashed' | 'DeviceRecovered',
    message: string,
  ): Condition {
    return recoveringCondition(status, reason, message, this.#options.clock.now());
  }
}
