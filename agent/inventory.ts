// The agent's device inventory: the drivers' latest listing, plus what only the agent knows
// (a device booting for a lease, leased, being reclaimed, quarantined), plus physical devices seen
// before and unplugged since (absent). The planner and the view both read it.
import type { Catalog, Presence } from '../api/index.js';
import type { Clock } from '../runtime/index.js';
import type {
  DeviceListing,
  Driver,
  DriverDevice,
  MakeableModel,
  PowerState,
} from './drivers/driver.js';
import { Listeners } from './listeners.js';
import type { InventoryState, PlannedDevice } from './planner.js';
import { quarantineReason, type QuarantineRecord } from './quarantine-plan.js';

/** What a new quarantine of a device gets for retries (set by the quarantine retrier). */
export type QuarantinePolicy = (
  device: DriverDevice | undefined,
  sinceMs: number,
) => Pick<QuarantineRecord, 'nextRetryAtMs' | 'waitsForOperator'>;

/** A quarantine as the planner and the view read it. */
export interface QuarantineView {
  reason: string;
  sinceMs: number;
  retries: number;
  nextRetryAtMs?: number;
}

/** The states the agent sets; the others (ready, shutdown, absent) follow from the listing. */
export type AgentHeldState = 'booting' | 'leased' | 'reclaiming' | 'quarantined' | 'deleting';

export class Inventory {
  /** Fires after any change that the view or the planner could see. */
  readonly changes = new Listeners<void>();
  readonly #clock: Clock;
  #catalog: Catalog | undefined;
  #makeable: readonly MakeableModel[] = [];
  #provisionProblem: string | undefined;
  #listed = new Map<string, DriverDevice>();
  /** Physical devices seen at least once; shown absent while the driver does not list them. */
  readonly #physicalSeen = new Map<string, DriverDevice>();
  readonly #held = new Map<string, AgentHeldState>();
  /** Why and since when each quarantined device is quarantined, and its retries. */
  readonly #quarantines = new Map<string, QuarantineRecord>();
  #quarantinePolicy: QuarantinePolicy = () => ({ waitsForOperator: true });
  readonly #readySince = new Map<string, number>();
  readonly #shutDownSince = new Map<string, number>();
  /** Local power changes (our own boot/shutdown) by sequence, so an older listing cannot undo them. */
  readonly #localPowerChange = new Map<string, number>();
  /**
   * Devices being made for a lease, by the id of the placeholder they stand under until they are
   * listed: they count as booting (they take a slot).
   */
  readonly #making = new Map<string, { lease: string; device: PlannedDevice }>();
  /** Devices the agent made, by the sequence when; a listing started before that still lacks them. */
  readonly #madeAt = new Map<string, number>();
  /** Devices the agent deleted, by the sequence when; a listing started before may still show them. */
  readonly #deletedAt = new Map<string, number>();
  #sequence = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Whether the drivers have been read at least once. */
  get isRead(): boolean {
    return this.#catalog !== undefined;
  }

  get catalog(): Catalog | undefined {
    return this.#catalog;
  }

  /** Why the drivers can make nothing, at the last listing, if they said so. */
  get provisionProblem(): string | undefined {
    return this.#provisionProblem;
  }

  /** What the drivers said, at the last listing, they can make. */
  get makeable(): readonly MakeableModel[] {
    return this.#makeable;
  }

  /** Lists the driver's devices and takes them in. */
  async refresh(driver: Pick<Driver, 'listDevices'>): Promise<void> {
    const startedAt = ++this.#sequence;
    const listing = await driver.listDevices();
    this.applyListing(listing, startedAt);
  }

  /** Takes a listing in; power the agent changed after `startedAt` (a sequence) is kept. */
  applyListing(listing: DeviceListing, startedAt = ++this.#sequence): void {
    const listed = new Map<string, DriverDevice>();
    // A device made after this listing started is not in it yet, and is not gone.
    for (const [id, madeAt] of this.#madeAt) {
      const known = this.#listed.get(id);
      if (madeAt > startedAt && known !== undefined) listed.set(id, known);
      else this.#madeAt.delete(id);
    }
    for (const [id, deletedAt] of this.#deletedAt) {
      if (deletedAt <= startedAt) this.#deletedAt.delete(id);
    }
    for (const device of listing.devices) {
      if (this.#deletedAt.has(device.id)) continue;
      const changedLocally = (this.#localPowerChange.get(device.id) ?? 0) > startedAt;
      const known = this.#listed.get(device.id);
      listed.set(
        device.id,
        changedLocally && known !== undefined ? { ...device, power: known.power } : device,
      );
      if (device.physical) this.#physicalSeen.set(device.id, device);
    }
    this.#listed = listed;
    this.#catalog = listing.catalog;
    this.#makeable = listing.makeable ?? [];
    this.#provisionProblem = listing.provisionProblem;
    // A virtual device gone from the listing is gone; the agent holds nothing for it any more.
    for (const id of this.#held.keys()) {
      if (!listed.has(id) && !this.#physicalSeen.has(id)) this.#held.delete(id);
    }
    this.changes.emit();
  }

  /** The device as the driver last described it (a physical one even while absent). */
  driverDevice(id: string): DriverDevice | undefined {
    return this.#listed.get(id) ?? this.#physicalSeen.get(id);
  }

  /** Every physical device seen, listed now or not: the presence watcher reads them all. */
  physicalDevices(): DriverDevice[] {
    return [...this.#physicalSeen.values()];
  }

  /** Takes a device out of service, saying why (the view shows it, with since when). */
  quarantine(id: string, reason: string): void {
    const sinceMs = this.#clock.now();
    this.#quarantines.set(id, {
      cause: reason.slice(0, 256),
      sinceMs,
      retries: 0,
      ...this.#quarantinePolicy(this.driverDevice(id), sinceMs),
    });
    // A device quarantined again (a retry's shutdown failed) is told as a change all the same.
    if (this.#held.get(id) === 'quarantined') this.changes.emit();
    this.hold(id, 'quarantined');
  }

  /** How a new quarantine's retries are set (quarantine-retrier.ts); by default none. */
  setQuarantinePolicy(policy: QuarantinePolicy): void {
    this.#quarantinePolicy = policy;
  }

  /** Why and since when a device is quarantined, and its retries, if it is. */
  quarantineOf(id: string): QuarantineView | undefined {
    const record = this.quarantineRecord(id);
    if (record === undefined) return undefined;
    return {
      reason: quarantineReason(record),
      sinceMs: record.sinceMs,
      retries: record.retries,
      ...(record.nextRetryAtMs !== undefined ? { nextRetryAtMs: record.nextRetryAtMs } : {}),
    };
  }

  /** The quarantine of a device as kept, if it is quarantined. */
  quarantineRecord(id: string): Readonly<QuarantineRecord> | undefined {
    return this.#held.get(id) === 'quarantined' ? this.#quarantines.get(id) : undefined;
  }

  /** Every quarantine kept, by device id. */
  quarantines(): [string, Readonly<QuarantineRecord>][] {
    return [...this.#quarantines].filter(([id]) => this.#held.get(id) === 'quarantined');
  }

  /** Records a retry's start or its outcome on a quarantined device (nothing if it is not). */
  updateQuarantine(id: string, update: Partial<Omit<QuarantineRecord, 'cause' | 'sinceMs'>>): void {
    const record = this.quarantineRecord(id);
    if (record === undefined) return;
    const next: QuarantineRecord = { ...record, ...update };
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined) delete next[key as keyof typeof update];
    }
    this.#quarantines.set(id, next);
    this.changes.emit();
  }

  /** Sets (or with undefined, clears) the agent's own state of a device. */
  hold(id: string, state: AgentHeldState | undefined): void {
    if (state !== 'quarantined') this.#quarantines.delete(id);
    if (this.#held.get(id) === state) return;
    if (state === undefined) this.#held.delete(id);
    else this.#held.set(id, state);
    this.changes.emit();
  }

  heldState(id: string): AgentHeldState | undefined {
    return this.#held.get(id);
  }

  /** Records a power change the agent made itself (booted, shut down) before the next listing. */
  setPower(id: string, power: PowerState): void {
    const device = this.#listed.get(id);
    if (device === undefined || device.power === power) return;
    this.#listed.set(id, { ...device, power });
    this.#localPowerChange.set(id, ++this.#sequence);
    this.changes.emit();
  }

  /**
   * Counts a device being made for `lease` as booting, under the placeholder id `id`, until `made`
   * or `makingFailed`: the planner then sees its slot taken, and the view shows it.
   */
  startMaking(id: string, lease: string, device: Omit<PlannedDevice, 'id' | 'state'>): void {
    this.#making.set(id, { lease, device: { ...device, id, state: 'booting' } });
    this.changes.emit();
  }

  /** The lease a placeholder (a device being made) is held for, if `id` is one. */
  makingFor(id: string): string | undefined {
    return this.#making.get(id)?.lease;
  }

  /** The device made under placeholder `id` is here: listed from now on, no longer a placeholder. */
  made(id: string, device: DriverDevice): void {
    this.#making.delete(id);
    this.#listed.set(device.id, device);
    this.#madeAt.set(device.id, ++this.#sequence);
    this.changes.emit();
  }

  /** A device the agent deleted: gone from the inventory now, before the next listing. */
  deleted(id: string): void {
    this.#deletedAt.set(id, ++this.#sequence);
    this.#listed.delete(id);
    this.#held.delete(id);
    this.#madeAt.delete(id);
    this.#readySince.delete(id);
    this.#shutDownSince.delete(id);
    this.changes.emit();
  }

  /** The device of placeholder `id` could not be made: its slot is free again. */
  makingFailed(id: string): void {
    if (this.#making.delete(id)) this.changes.emit();
  }

  /** Forgets a physical device removed from the host for good (no longer shown absent). */
  forget(id: string): void {
    if (this.#listed.has(id) || !this.#physicalSeen.delete(id)) return;
    this.#held.delete(id);
    this.changes.emit();
  }

  /** Devices for the planner and the view, with the latest presence of each physical one. */
  devices(presenceOf: (id: string) => Presence | undefined): PlannedDevice[] {
    const result: PlannedDevice[] = [];
    const ids = new Set([...this.#listed.keys(), ...this.#physicalSeen.keys()]);
    for (const id of ids) {
      const listed = this.#listed.get(id);
      const device = listed ?? this.#physicalSeen.get(id);
      if (device === undefined) continue;
      const state = this.#stateOf(device, listed !== undefined);
      if (state === undefined) continue;
      const planned: PlannedDevice = {
        id: device.id,
        name: device.name,
        model: device.model,
        platform: device.platform,
        os: device.os,
        physical: device.physical,
        class: device.class,
        state,
      };
      if (state === 'ready') {
        if (!this.#readySince.has(id)) this.#readySince.set(id, this.#clock.now());
        planned.readySinceMs = this.#readySince.get(id);
      } else {
        this.#readySince.delete(id);
      }
      if (state === 'shutdown') {
        if (!this.#shutDownSince.has(id)) this.#shutDownSince.set(id, this.#clock.now());
        planned.shutDownSinceMs = this.#shutDownSince.get(id);
      } else if (state !== 'deleting') {
        this.#shutDownSince.delete(id);
      }
      if (device.deletable === true) planned.deletable = true;
      const quarantine = this.quarantineOf(id);
      if (quarantine !== undefined) planned.quarantinedFor = quarantine;
      const presence = device.physical ? presenceOf(id) : undefined;
      if (presence !== undefined) planned.presence = presence;
      result.push(planned);
    }
    result.push(...[...this.#making.values()].map((making) => making.device));
    return result.sort((a, b) => a.id.localeCompare(b.id));
  }

  #stateOf(device: DriverDevice, listed: boolean): InventoryState | undefined {
    const held = this.#held.get(device.id);
    // A quarantine retry boots the device: it takes a running slot (the view still says quarantined).
    if (held === 'quarantined' && this.#quarantines.get(device.id)?.retrying === true) {
      return 'booting';
    }
    if (held !== undefined) return held;
    if (device.physical) return listed ? 'ready' : 'absent';
    switch (device.power) {
      case 'booted':
        return 'ready';
      case 'shutdown':
        return 'shutdown';
      case 'transitioning':
        return 'booting';
      case 'unavailable':
        return undefined;
    }
  }
}
