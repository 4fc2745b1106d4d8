// The agent's device inventory: the drivers' latest listing; each simulator's and emulator's life,
// the device machine's state (device-machine.ts), written by its shell alone (device-steps.ts);
// the states phones keep by their own rules (leased, reclaiming, quarantined); why and since when a
// device is quarantined; and physical devices seen before and unplugged since (absent). The planner
// and the view both read it: a virtual device's state there is its life's (viewStateOf), the
// listing adding only what the tools say of a free device's power (on its way up or down, or not
// usable now).
import type { Catalog, Presence } from '../api/index.js';
import type { Clock } from '../runtime/index.js';
import { viewStateOf, type DeviceLife } from './device-machine.js';
import type { DeviceListing, DriverDevice, MakeableModel, PowerState } from './drivers/driver.js';
import { Listeners } from './listeners.js';
import type { InventoryState, PlannedDevice } from './planner.js';
import { quarantineReason, type QuarantineRecord } from './quarantine-plan.js';

/** What a new quarantine of a device gets for retries (set by the quarantine retrier). */
export type QuarantinePolicy = (
  device: DriverDevice | undefined,
  sinceMs: number,
) => Pick<QuarantineRecord, 'nextRetryAtMs'>;

/** A quarantine as the planner and the view read it. */
export interface QuarantineView {
  reason: string;
  sinceMs: number;
  retries: number;
  nextRetryAtMs?: number;
}

/** The states a phone is held in by its own rules (not the device machine's). */
export type PhysicalHeldState = 'leased' | 'reclaiming' | 'quarantined';

/** What a listing told that the device machine takes (device-steps.ts takeListing). */
export interface ListingNews {
  /** Virtual devices listed with no life yet, or whose power the tools now say changed. */
  listed: DriverDevice[];
  /** Virtual devices with a life that the tools no longer list. */
  gone: string[];
}

/** The lives in which a device is quarantined (its quarantine record is kept exactly then). */
const QUARANTINE_KINDS: ReadonlySet<DeviceLife['kind']> = new Set([
  'quarantined',
  'retrying',
  'awaitingOperator',
]);

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
  /** Each virtual device's life (the device machine's state), by id; a placeholder's too. */
  readonly #lives = new Map<string, DeviceLife>();
  readonly #physicalHeld = new Map<string, PhysicalHeldState>();
  /** Why and since when each quarantined device is quarantined, and its retries. */
  readonly #quarantines = new Map<string, QuarantineRecord>();
  #quarantinePolicy: QuarantinePolicy = () => ({});
  readonly #readySince = new Map<string, number>();
  readonly #shutDownSince = new Map<string, number>();
  /** Local power changes (our own boot/shutdown) by sequence, so an older listing cannot undo them. */
  readonly #localPowerChange = new Map<string, number>();
  /** What a device being made will be, by its placeholder id (its life is `creating`). */
  readonly #making = new Map<string, PlannedDevice>();
  /** Devices the agent made, by the sequence when; a listing started before that still lacks them. */
  readonly #madeAt = new Map<string, number>();
  /** Devices the agent deleted, by the sequence when; a listing started before may still show them. */
  readonly #deletedAt = new Map<string, number>();
  #sequence = 0;
  /** Changes are told once at the end of a batch (a listing taken in with its lives). */
  #batchDepth = 0;
  #changedInBatch = false;

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

  /** Runs `work`, telling its changes once at its end. */
  batch<T>(work: () => T): T {
    this.#batchDepth++;
    try {
      return work();
    } finally {
      if (--this.#batchDepth === 0 && this.#changedInBatch) {
        this.#changedInBatch = false;
        this.changes.emit();
      }
    }
  }

  /** A listing is starting: what it says is weighed against what the agent does meanwhile. */
  beginListing(): number {
    return ++this.#sequence;
  }

  /**
   * Takes a listing in (power the agent changed after `startedAt`, a sequence, is kept) and answers
   * what the device machine is to be told of it. Lives are the shell's to change (device-steps.ts).
   */
  applyListing(listing: DeviceListing, startedAt = this.beginListing()): ListingNews {
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
    const news: ListingNews = { listed: [], gone: [] };
    for (const device of listed.values()) {
      if (device.physical) continue;
      const before = this.#listed.get(device.id);
      const powerChanged =
        before !== undefined && (before.power === 'booted') !== (device.power === 'booted');
      if (!this.#lives.has(device.id) || powerChanged) news.listed.push(device);
    }
    for (const [id, life] of this.#lives) {
      if (life.kind !== 'creating' && !listed.has(id)) news.gone.push(id);
    }
    this.#listed = listed;
    this.#catalog = listing.catalog;
    this.#makeable = listing.makeable ?? [];
    this.#provisionProblem = listing.provisionProblem;
    this.#changed();
    return news;
  }

  /** The device as the driver last described it (a physical one even while absent). */
  driverDevice(id: string): DriverDevice | undefined {
    return this.#listed.get(id) ?? this.#physicalSeen.get(id);
  }

  /** Every physical device seen, listed now or not: the presence watcher reads them all. */
  physicalDevices(): DriverDevice[] {
    return [...this.#physicalSeen.values()];
  }

  /** A virtual device's life (a placeholder's too); undefined for one not taken in. */
  lifeOf(id: string): DeviceLife | undefined {
    return this.#lives.get(id);
  }

  /**
   * Sets a virtual device's life (the shell's write). `gone` forgets it (and a placeholder's
   * description); a life out of quarantine drops its quarantine record.
   */
  setLife(id: string, life: DeviceLife): void {
    if (!QUARANTINE_KINDS.has(life.kind)) this.#quarantines.delete(id);
    if (life.kind === 'gone') {
      this.#lives.delete(id);
      this.#making.delete(id);
    } else {
      this.#lives.set(id, life);
    }
    this.#changed();
  }

  /** A phone's state by its own rules; undefined while it is free (or absent). */
  physicalHeld(id: string): PhysicalHeldState | undefined {
    return this.#physicalHeld.get(id);
  }

  /** Sets (or with undefined, clears) a phone's state; out of quarantine, its record goes. */
  holdPhysical(id: string, state: PhysicalHeldState | undefined): void {
    if (state !== 'quarantined') this.#quarantines.delete(id);
    if (state === undefined) this.#physicalHeld.delete(id);
    else this.#physicalHeld.set(id, state);
    this.#changed();
  }

  /**
   * Records why and since when a device is quarantined, its first retry per the policy: only while
   * its life (or a phone's own state) says it is quarantined.
   */
  startQuarantine(id: string, reason: string): void {
    if (!this.#quarantined(id)) return;
    const sinceMs = this.#clock.now();
    this.#quarantines.set(id, {
      cause: reason.slice(0, 256),
      sinceMs,
      retries: 0,
      ...this.#quarantinePolicy(this.driverDevice(id), sinceMs),
    });
    this.#changed();
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
    return this.#quarantined(id) ? this.#quarantines.get(id) : undefined;
  }

  /** Every quarantine kept, by device id. */
  quarantines(): [string, Readonly<QuarantineRecord>][] {
    return [...this.#quarantines].filter(([id]) => this.#quarantined(id));
  }

  /** Records a retry's time or its outcome on a quarantined device (nothing if it is not). */
  updateQuarantine(id: string, update: Partial<Omit<QuarantineRecord, 'cause' | 'sinceMs'>>): void {
    const record = this.quarantineRecord(id);
    if (record === undefined) return;
    const next: QuarantineRecord = { ...record, ...update };
    for (const [key, value] of Object.entries(update)) {
      if (value === undefined) delete next[key as keyof typeof update];
    }
    this.#quarantines.set(id, next);
    this.#changed();
  }

  /** Records a power change the agent made itself (booted, shut down) before the next listing. */
  setPower(id: string, power: PowerState): void {
    const device = this.#listed.get(id);
    if (device === undefined || device.power === power) return;
    this.#listed.set(id, { ...device, power });
    this.#localPowerChange.set(id, ++this.#sequence);
    this.#changed();
  }

  /** What the device being made under placeholder `id` will be: the planner and the view see it. */
  startMaking(id: string, device: Omit<PlannedDevice, 'id' | 'state'>): void {
    this.#making.set(id, { ...device, id, state: 'booting' });
    this.#changed();
  }

  /** The device made under placeholder `id` is here: listed from now on, no longer a placeholder. */
  made(id: string, device: DriverDevice): void {
    this.#making.delete(id);
    this.#lives.delete(id);
    this.#listed.set(device.id, device);
    this.#madeAt.set(device.id, ++this.#sequence);
    this.#changed();
  }

  /** A device the agent deleted: gone from the listing now, before the next listing. */
  deleted(id: string): void {
    if (!this.#listed.has(id)) return;
    this.#deletedAt.set(id, ++this.#sequence);
    this.#listed.delete(id);
    this.#madeAt.delete(id);
    this.#readySince.delete(id);
    this.#shutDownSince.delete(id);
    this.#changed();
  }

  /** Forgets a physical device removed from the host for good (no longer shown absent). */
  forget(id: string): void {
    if (this.#listed.has(id) || !this.#physicalSeen.delete(id)) return;
    this.#physicalHeld.delete(id);
    this.#quarantines.delete(id);
    this.#changed();
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
    for (const [id, making] of this.#making) {
      if (this.#lives.get(id)?.kind === 'creating') result.push(making);
    }
    return result.sort((a, b) => a.id.localeCompare(b.id));
  }

  #stateOf(device: DriverDevice, listed: boolean): InventoryState | undefined {
    if (device.physical) return this.#physicalHeld.get(device.id) ?? (listed ? 'ready' : 'absent');
    const life = this.#lives.get(device.id);
    if (life === undefined) return undefined; // not taken in by the machine yet
    if (life.kind === 'ready' || life.kind === 'shutdown') {
      // Free: a device someone else is booting or shutting down counts as running and cannot be
      // granted; one the tools cannot use now is not shown.
      if (device.power === 'transitioning') return 'booting';
      if (device.power === 'unavailable') return undefined;
    }
    return viewStateOf(life.kind);
  }

  /** Whether the device's life (or a phone's own state) says it is quarantined. */
  #quarantined(id: string): boolean {
    const life = this.#lives.get(id);
    if (life !== undefined) return QUARANTINE_KINDS.has(life.kind);
    return this.#physicalHeld.get(id) === 'quarantined';
  }

  #changed(): void {
    if (this.#batchDepth > 0) this.#changedInBatch = true;
    else this.changes.emit();
  }
}
