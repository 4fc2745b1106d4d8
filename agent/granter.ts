// The lease granter: answers each lease with the planner's decision and carries it out (reserve,
// read presence; the slow work of evicting, making and booting is device-preparation.ts), and
// reclaims devices on release. Decisions run one at a time through a Serializer and reserve their
// device before anything is awaited, so two leases arriving together never get one device; slow
// work runs after the decision, outside it (kube-scheduler's scheduling and binding cycles).
import type { DeviceSpec, GrantedDevice } from '../api/index.js';
import type { ReclaimPolicy, Limits } from './config.js';
import {
  DevicePreparation,
  grantedDevice,
  type GrantStepListener,
  type Prepared,
} from './device-preparation.js';
import { DeviceSteps, type Move } from './device-steps.js';
import { reclaimLeaseDevice } from './lease-reclaim.js';
import type { DeviceToMake, Driver, ExecPlan, ResetBaseline } from './drivers/driver.js';
import type { Inventory } from './inventory.js';
import { silentLogger, type Clock, type Logger } from '../runtime/index.js';
import { Serializer } from './listeners.js';
import { plan, type AgentRefusal, type PlannedDevice } from './planner.js';
import type { PresenceWatcher } from './presence.js';
import { StageTimings } from './stage-timings.js';

export { deviceName, type GrantStep, type GrantStepListener } from './device-preparation.js';

export type LeaseOrigin = 'fleet' | 'local';

export interface LeaseRecord {
  leaseId: string;
  origin: LeaseOrigin;
  device: GrantedDevice;
  source: 'warm' | 'cold';
  grantedAtMs: number;
  /** Physical only: what reset undoes back to. */
  baseline?: ResetBaseline;
}

export type GrantOutcome =
  { kind: 'granted'; lease: LeaseRecord } | { kind: 'refused'; refusal: AgentRefusal };

export type ReclaimOutcome = 'ready' | 'shut-down' | 'quarantined' | 'not-leased';

export interface LeaseGranterOptions {
  driver: Driver;
  inventory: Inventory;
  presence: PresenceWatcher;
  clock: Clock;
  limits: Limits;
  reclaim: ReclaimPolicy;
  capabilities: () => readonly { name: string; available: boolean }[];
  /** Specs of the local requests waiting, which a fleet lease must not overtake. */
  localWaiting?: () => readonly DeviceSpec[];
  /** Stops the tools running on a lease's device; resolves once they are gone. */
  stopExecs?: (leaseId: string) => Promise<void>;
  /** How long making and booting took here; estimates for the next ones. */
  timings?: StageTimings;
  /** Whether free space is low where devices live (then nothing is made). */
  diskLow?: () => boolean;
  /**
   * Called inside the decision when a fleet lease is refused for want of room: the agent writes
   * the view it refused on at once (ADR 0032), so that the controller's memo of the refusal ends
   * when that view changes, even if what it refused for was taken and given back within the wait
   * for devices taken.
   */
  refusedForRoom?: () => void;
  /** The device machine's shell (the agent's one; a granter alone makes its own). */
  steps?: DeviceSteps;
  logger?: Logger;
}

/** A decision taken inside the serializer; a cold boot is finished outside it. */
type Decision =
  | { kind: 'done'; outcome: GrantOutcome }
  | { kind: 'boot'; device: PlannedDevice; evict: Move[] }
  | { kind: 'make'; want: DeviceToMake; evict: Move[] };

function refused(refusal: AgentRefusal): GrantOutcome {
  return { kind: 'refused', refusal };
}

/** The device machine refused a move the plan asked for (the plan and the machine disagree). */
function notTaken(why: string): GrantOutcome {
  return refused({ code: 'NO_CAPACITY', message: `the device cannot be taken now: ${why}` });
}

export class LeaseGranter {
  readonly #options: LeaseGranterOptions;
  readonly #logger: Logger;
  readonly #decisions = new Serializer();
  readonly #leases = new Map<string, LeaseRecord>();
  readonly #inFlight = new Map<string, Promise<GrantOutcome>>();
  readonly #preparation: DevicePreparation;
  /** The device machine's shell: every grant, eviction, make and adoption is its move. */
  readonly #steps: DeviceSteps;

  constructor(options: LeaseGranterOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
    const { driver, inventory } = options;
    this.#steps = options.steps ?? new DeviceSteps({ driver, inventory, logger: this.#logger });
    this.#preparation = new DevicePreparation({
      driver: options.driver,
      inventory: options.inventory,
      steps: this.#steps,
      clock: options.clock,
      timings: options.timings ?? new StageTimings(),
      logger: this.#logger,
    });
  }

  /** The device machine's shell the granter moves devices through. */
  get steps(): DeviceSteps {
    return this.#steps;
  }

  lease(leaseId: string): LeaseRecord | undefined {
    return this.#leases.get(leaseId);
  }

  leases(): LeaseRecord[] {
    return [...this.#leases.values()];
  }

  /**
   * Grants or refuses a lease. Asking again for a lease already granted (a watch that delivers it
   * twice) answers the same grant; asking while it is being granted waits for that answer.
   */
  grant(
    leaseId: string,
    spec: DeviceSpec,
    origin: LeaseOrigin = 'fleet',
    onStep?: GrantStepListener,
  ): Promise<GrantOutcome> {
    const existing = this.#leases.get(leaseId);
    if (existing !== undefined) return Promise.resolve({ kind: 'granted', lease: existing });
    const inFlight = this.#inFlight.get(leaseId);
    if (inFlight !== undefined) return inFlight;
    const outcome = this.#decisions
      .run(() => this.#decide(leaseId, spec, origin))
      .then((decision) => {
        switch (decision.kind) {
          case 'done':
            return decision.outcome;
          case 'boot':
            return this.#preparation
              .bootCold(decision.device, decision.evict, onStep)
              .then((prepared) => this.#grantPrepared(leaseId, origin, prepared));
          case 'make':
            return this.#preparation
              .makeAndBoot(leaseId, decision.want, decision.evict, onStep)
              .then((prepared) => this.#grantPrepared(leaseId, origin, prepared));
        }
      })
      .finally(() => this.#inFlight.delete(leaseId));
    this.#inFlight.set(leaseId, outcome);
    return outcome;
  }

  /**
   * Takes back a lease this agent granted before it restarted (its Lease still says Granted, with
   * this device): the device is held again if the driver still lists it and nothing else holds
   * it (a simulator or emulator: the machine's leaseResumed, from ready or shut down). Answers
   * false when the lease cannot be honoured safely; the caller then gives it up.
   */
  adopt(leaseId: string, device: GrantedDevice): Promise<boolean> {
    return this.decide(() => {
      if (this.#leases.has(leaseId)) return true;
      const { inventory } = this.#options;
      const listed = inventory.driverDevice(device.id);
      const heldByAnother = [...this.#leases.values()].some(
        (lease) => lease.device.id === device.id,
      );
      if (listed === undefined || heldByAnother) return false;
      if (listed.physical) {
        if (inventory.physicalHeld(device.id) !== undefined) return false;
        inventory.holdPhysical(device.id, 'leased');
      } else {
        const step = this.#steps.take(device.id, { type: 'leaseResumed', lease: leaseId });
        if ('refused' in step) return false;
        this.#steps.write(device.id, step.state);
      }
      this.#leases.set(leaseId, {
        leaseId,
        origin: 'fleet',
        device,
        source: 'warm',
        grantedAtMs: this.#options.clock.now(),
      });
      return true;
    });
  }

  /**
   * Lets a lease go without reclaiming its device: the device crashed too often, or would not boot
   * again, and is quarantined (crash-recovery.ts). A later reclaim of the lease finds nothing.
   */
  lose(leaseId: string): LeaseRecord | undefined {
    const record = this.#leases.get(leaseId);
    this.#leases.delete(leaseId);
    return record;
  }

  /** Ends a lease and reclaims its device; resolves once the device is back (or quarantined). */
  reclaim(leaseId: string): Promise<ReclaimOutcome> {
    const inFlight = this.#inFlight.get(leaseId);
    if (inFlight === undefined) return this.#reclaimNow(leaseId);
    const reclaimNow = (): Promise<ReclaimOutcome> => this.#reclaimNow(leaseId);
    return inFlight.then(reclaimNow, reclaimNow);
  }

  // Everything up to the first await runs at once: the device is reclaiming when reclaim returns.
  #reclaimNow(leaseId: string): Promise<ReclaimOutcome> {
    const record = this.#leases.get(leaseId);
    if (record === undefined) return Promise.resolve('not-leased');
    this.#leases.delete(leaseId);
    // No tool of the lease may go on driving the device once it is erased or given to another.
    const execsStopped = this.#options.stopExecs?.(leaseId);
    const { driver, inventory, reclaim } = this.#options;
    const context = { driver, inventory, reclaim, steps: this.#steps, logger: this.#logger };
    return reclaimLeaseDevice(context, record, execsStopped);
  }

  /**
   * Runs `decide` among the grant decisions, one at a time with them: what it reserves (writes in
   * the inventory) no grant decided after it can take, and it sees every grant decided before.
   */
  decide<T>(decide: () => T): Promise<T> {
    return this.#decisions.run(() => Promise.resolve(decide()));
  }

  /** The argv to run a tool on a lease's device, or why not (nothing runs here). */
  execArgv(leaseId: string, tool: string, args: readonly string[]): ExecPlan {
    const record = this.#leases.get(leaseId);
    const device = record && this.#options.inventory.driverDevice(record.device.id);
    if (record === undefined || device === undefined) {
      return {
        ok: false,
        code: 'LEASE_NOT_ACTIVE',
        message: `lease ${leaseId} is not granted here`,
      };
    }
    return this.#options.driver.execArgv(tool, args, device);
  }

  // --- grant ---

  async #decide(leaseId: string, spec: DeviceSpec, origin: LeaseOrigin): Promise<Decision> {
    const { inventory, presence } = this.#options;
    if (!inventory.isRead || inventory.catalog === undefined) {
      return {
        kind: 'done',
        outcome: refused({
          code: 'NO_CAPACITY',
          message: 'the agent has not read its devices yet',
        }),
      };
    }
    const decision = plan({
      spec,
      catalog: inventory.catalog,
      capabilities: this.#options.capabilities(),
      devices: inventory.devices((id) => presence.latest(id)),
      limits: this.#options.limits,
      localWaiting: origin === 'fleet' ? (this.#options.localWaiting?.() ?? []) : [],
      makeable: inventory.makeable,
      diskLow: this.#options.diskLow?.() ?? false,
    });
    switch (decision.kind) {
      case 'refuse':
        if (origin === 'fleet' && decision.refusal.code === 'NO_CAPACITY')
          this.#options.refusedForRoom?.();
        return { kind: 'done', outcome: refused(decision.refusal) };
      case 'warm': {
        // The machine takes the grant (ready --grantWarm--> leased) or refuses it.
        const step = this.#steps.take(decision.device.id, { type: 'grantWarm', lease: leaseId });
        if ('refused' in step) return { kind: 'done', outcome: notTaken(step.refused) };
        this.#steps.write(decision.device.id, step.state);
        return { kind: 'done', outcome: this.#record(leaseId, origin, decision.device, 'warm') };
      }
      case 'cold': {
        // Reserve now, inside the decision (shutdown --grantCold--> booting, and each device
        // shut down to make room, ready --evict--> shuttingDown); the boot happens after it.
        const step = this.#steps.take(decision.device.id, { type: 'grantCold', lease: leaseId });
        if ('refused' in step) return { kind: 'done', outcome: notTaken(step.refused) };
        const evict = this.#makeRoom(decision.evict);
        if ('refused' in evict) return { kind: 'done', outcome: notTaken(evict.refused) };
        this.#steps.write(decision.device.id, step.state);
        return { kind: 'boot', device: decision.device, evict };
      }
      case 'create': {
        // The slot is taken now (new --make--> creating: a placeholder), the device made after
        // the decision.
        const model = inventory.makeable.find(
          (entry) =>
            entry.platform === decision.want.platform && entry.model === decision.want.model,
        );
        const making = this.#steps.make(leaseId, {
          name: `new ${decision.want.model}`,
          model: decision.want.model,
          platform: decision.want.platform,
          os: decision.want.os,
          physical: false,
          class: model?.class ?? 'phone',
        });
        if ('refused' in making) return { kind: 'done', outcome: notTaken(making.refused) };
        const evict = this.#makeRoom(decision.evict);
        if ('refused' in evict) {
          this.#steps.makeFailed(leaseId);
          return { kind: 'done', outcome: notTaken(evict.refused) };
        }
        return { kind: 'make', want: decision.want, evict };
      }
      case 'physical':
        return {
          kind: 'done',
          outcome: await this.#grantPhysical(leaseId, origin, decision.candidates),
        };
    }
  }

  /** The devices the plan shuts down to make room, each the machine's evict move (all or none). */
  #makeRoom(evict: readonly PlannedDevice[]): Move[] | { refused: string } {
    return this.#steps.takeAll(
      evict.map((device) => device.id),
      { type: 'evict' },
    );
  }

  /** Reads presence at grant time, candidate by candidate; the first present one is granted. */
  async #grantPhysical(
    leaseId: string,
    origin: LeaseOrigin,
    candidates: PlannedDevice[],
  ): Promise<GrantOutcome> {
    const { inventory, presence, driver } = this.#options;
    let sawNotPresent = false;
    for (const candidate of candidates) {
      const device = inventory.driverDevice(candidate.id);
      if (device === undefined) continue;
      inventory.holdPhysical(device.id, 'leased'); // reserved while we read
      const read = await presence.read(device);
      if (read?.present === true) {
        const baseline = await driver.readResetBaseline(device).catch((error: unknown) => {
          this.#logger.warn('could not read the reset baseline; reset will remove nothing', {
            device: device.id,
            error: (error as Error).message,
          });
          return undefined;
        });
        return this.#record(leaseId, origin, candidate, 'warm', baseline);
      }
      inventory.holdPhysical(device.id, undefined);
      if (read !== undefined) sawNotPresent = true;
    }
    return sawNotPresent
      ? refused({
          code: 'NO_CAPACITY',
          capacityReason: 'device-not-present',
          message: 'the matching device was read not present at grant',
        })
      : refused({ code: 'NO_CAPACITY', message: 'the matching device could not be read at grant' });
  }

  #grantPrepared(leaseId: string, origin: LeaseOrigin, prepared: Prepared): GrantOutcome {
    return 'refusal' in prepared
      ? refused(prepared.refusal)
      : this.#record(leaseId, origin, prepared.device, 'cold');
  }

  #record(
    leaseId: string,
    origin: LeaseOrigin,
    device: PlannedDevice,
    source: 'warm' | 'cold',
    baseline?: ResetBaseline,
  ): GrantOutcome {
    const lease: LeaseRecord = {
      leaseId,
      origin,
      device: grantedDevice(device),
      source,
      grantedAtMs: this.#options.clock.now(),
      ...(baseline ? { baseline } : {}),
    };
    this.#leases.set(leaseId, lease);
    return { kind: 'granted', lease };
  }
}
