// Crash recovery under the same lease (issue 34): a leased simulator or emulator that the tools
// list shut down (a simulator that went Shutdown; an emulator whose process exited, its serial
// gone from `adb devices`), or whose driver check (`checkDevice`) fails on the probe interval, has
// crashed. Within its crash budget (crash-budget.ts) it is shut down and booted again while the
// lease stays Granted, and the holder is told (`news`: the cluster agent writes it on the Lease);
// past it, or when it will not boot again, the lease ends LEASE_LOST and the device is quarantined.
// Physical devices are not watched here (presence.ts shows them absent).
//
// The machine: each crash and its answer are steps of the device machine (device-machine.ts,
// rows leased→recovering→leased, leased→quarantined, recovering→quarantined), and the effects it
// answers are carried out here in its order. The machine's 'recovering' state lives only in this
// class (`#watched`, per lease): the inventory keeps holding the device 'leased' meanwhile (the
// machine's viewStateOf('recovering') is 'leased' too), so no grant and no idle sweep can take it,
// and the granter keeps the lease's record. Nothing else keeps a copy of the recovery.
import type { Condition, DeviceRecovery } from '../api/index.js';
import { DEVICE_RECOVERING } from '../api/index.js';
import { silentLogger, type Clock, type Logger } from '../runtime/index.js';
import { crashBudget, DEFAULT_CRASH_RULE, type CrashRule } from './crash-budget.js';
import {
  nextDevice,
  type DeviceEffect,
  type DeviceEvent,
  type DeviceLife,
} from './device-machine.js';
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
  execs: RunningExecs;
  timings: StageTimings;
  clock: Clock;
  /** Lists the devices again: a failed check on a device the tools now list down says so. */
  relist?: () => Promise<void>;
  rule?: CrashRule;
  logger?: Logger;
}

/** What the holder is to be told about a lease's device, as the Lease's status should say it. */
export interface LeaseDeviceHealth {
  /** While the device is booted again; null once it is back (clears the status field). */
  recovery: DeviceRecovery | null;
  /** The DeviceRecovering condition; absent while the device never crashed. */
  condition?: Condition;
  /** The lease is lost (past the crash budget, or the device would not boot again): why. */
  lost?: string;
}

/** A lease whose device crashed at least once, as the machine sees it. */
interface Watched {
  life: DeviceLife;
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
    return this.#watched.get(leaseId)?.life.kind === 'recovering';
  }

  /** Resolves once a recovery in progress settled (at once when there is none). */
  async settled(leaseId: string): Promise<void> {
    await this.#watched.get(leaseId)?.settled;
  }

  /** The lease ended and its device was reclaimed: nothing more to tell about it. */
  forget(leaseId: string): void {
    if (this.#watched.get(leaseId)?.life.kind !== 'recovering') this.#watched.delete(leaseId);
  }

  /** An exec asked while the device is booted again: refused at once, saying when it is back. */
  execRefusal(leaseId: string): ExecPlan | undefined {
    const watched = this.#watched.get(leaseId);
    const recovery = watched?.health.recovery;
    if (watched?.life.kind !== 'recovering' || !recovery) return undefined;
    const name = this.#options.inventory.driverDevice(watched.deviceId)?.name ?? watched.deviceId;
    return {
      ok: false,
      code: 'UNAVAILABLE',
      message: `device ${name} is restarting after a crash; ${this.#backIn(recovery)}`,
    };
  }

  /**
   * After a listing: a leased virtual device the tools list shut down has crashed (a simulator
   * gone Shutdown; an emulator whose process exited, its serial gone from `adb devices`).
   */
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
          try {
            await driver.checkDevice?.(device);
          } catch (error) {
            // Listed again first: a device the tools now list down crashed that way, not a check.
            await this.#options.relist?.().catch(() => undefined);
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
    // A device no longer listed at all is the machine's listedGone, not a crash: nothing to boot.
    // Its lease keeps today's rule (answered when it is released, reclaiming nothing).
    if (this.#options.inventory.driverDevice(record.device.id) === undefined) return;
    const watched = this.#watched.get(leaseId) ?? {
      life: { kind: 'leased', owned: false, lease: leaseId },
      deviceId: record.device.id,
      health: { recovery: null },
    };
    if (watched.life.kind !== 'leased') return;
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
      const estimate = this.#bootEstimateMs(record);
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
    const reason = `crashed ${crashes} times in ${this.#windowText()}`;
    watched.settled = this.#step(watched, record, { type: verdict.event }, reason).catch(
      (error: unknown) =>
        this.#logger.error('crash recovery failed', { lease: leaseId, error: String(error) }),
    );
  }

  // --- the machine's steps and their effects ---

  /** Takes one event through the machine, carries out its effects, and the event they end in. */
  async #step(
    watched: Watched,
    record: LeaseRecord,
    event: DeviceEvent,
    quarantineReason: string,
  ): Promise<void> {
    const step = nextDevice(watched.life, event);
    if ('refused' in step) {
      this.#logger.warn('device event refused', { lease: record.leaseId, refused: step.refused });
      return;
    }
    watched.life = step.state;
    // Quarantined first, before anything is awaited: no grant can take the device meanwhile.
    if (step.state.kind === 'quarantined') {
      this.#options.inventory.quarantine(watched.deviceId, quarantineReason);
    }
    let booted: { ok: true; ms: number } | { ok: false; error: string } | undefined;
    for (const effect of step.effects) {
      const result = await this.#carryOut(effect, watched, record, quarantineReason);
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
  ): Promise<{ ok: true; ms: number } | { ok: false; error: string } | undefined> {
    const { driver, inventory, execs, granter, clock, timings } = this.#options;
    const { leaseId } = record;
    const name = record.device.name;
    switch (effect.type) {
      case 'stopExecs': {
        // Its tools cannot go on: the device under them is gone. While it is booted again the
        // lease goes on, so they end UNAVAILABLE; when the lease is lost, LEASE_LOST.
        const losing = watched.life.kind !== 'recovering';
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
        const lost = `the device ${name} ${why}; it is quarantined and the lease is lost`;
        watched.health = {
          recovery: null,
          ...(watched.health.condition
            ? { condition: this.#condition('False', 'DeviceCrashed', lost) }
            : {}),
          lost,
        };
        this.#logger.warn('a lease is lost: its device crashed', { lease: leaseId, why });
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

  /** Fleet and local leases on virtual devices, held leased and not being recovered. */
  #watchable(): LeaseRecord[] {
    const { granter, inventory } = this.#options;
    return granter
      .leases()
      .filter(
        (record) =>
          !record.device.physical &&
          inventory.heldState(record.device.id) === 'leased' &&
          this.#watched.get(record.leaseId)?.life.kind !== 'recovering',
      );
  }

  #bootEstimateMs(record: LeaseRecord): number | undefined {
    return this.#options.timings.estimate('booting', record.device).ms;
  }

  #backIn(recovery: DeviceRecovery): string {
    if (recovery.estimatedSeconds === undefined) return 'back when it has booted';
    const due = Date.parse(recovery.since) + recovery.estimatedSeconds * 1000;
    const left = Math.ceil((due - this.#options.clock.now()) / 1000);
    return left > 0
      ? `back in about ${left} s`
      : `it is taking longer than the usual ${recovery.estimatedSeconds} s`;
  }

  #windowText(): string {
    const minutes = this.#rule.windowMs / 60_000;
    return Number.isInteger(minutes)
      ? `${minutes} minute${minutes === 1 ? '' : 's'}`
      : `${Math.round(this.#rule.windowMs / 1000)} s`;
  }

  #condition(
    status: 'True' | 'False',
    reason: 'DeviceCrashed' | 'DeviceRecovered',
    message: string,
  ): Condition {
    return {
      type: DEVICE_RECOVERING,
      status,
      reason,
      message: message.slice(0, 1024),
      lastTransitionTime: new Date(this.#options.clock.now()).toISOString(),
    };
  }
}

/** What the tools listing a leased device down means, by platform. */
function downCause(platform: string): string {
  return platform === 'android' ? 'emulator process exited' : 'shut down';
}
