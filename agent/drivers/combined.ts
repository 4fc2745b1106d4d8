// Several drivers as one: a Mac runs simctl and devicectl (and maybe adb). Listings are merged;
// every operation on a device goes to the driver that listed it.
import type { Catalog, Platform, Presence } from '../../api/index.js';
import {
  checkToolFits,
  DriverError,
  type DeviceListing,
  type DeviceToMake,
  type Driver,
  type DriverDevice,
  type ExecPlan,
  type ResetBaseline,
} from './driver.js';
import type { DoctorFinding, DoctorInspection, DoctorRepair } from './doctor-finding.js';

function mergeCatalogs(catalogs: Catalog[]): Catalog {
  const key = (value: object): string => JSON.stringify(value);
  const models = new Map(catalogs.flatMap((c) => c.models).map((model) => [key(model), model]));
  const runtimes = new Map(catalogs.flatMap((c) => c.runtimes).map((r) => [key(r), r]));
  return {
    platforms: [...new Set(catalogs.flatMap((c) => c.platforms))],
    models: [...models.values()].slice(0, 256),
    runtimes: [...runtimes.values()].slice(0, 256),
  };
}

export class CombinedDriver implements Driver {
  readonly kind = 'combined';
  readonly #drivers: readonly Driver[];
  #owners = new Map<string, Driver>();
  /** Which driver makes each model (platform/model), from the last listing. */
  #makers = new Map<string, Driver>();

  constructor(drivers: readonly Driver[]) {
    if (drivers.length === 0) throw new DriverError('no drivers to combine');
    this.#drivers = drivers;
  }

  get platforms(): readonly Platform[] {
    return [...new Set(this.#drivers.flatMap((driver) => driver.platforms))];
  }

  async listDevices(): Promise<DeviceListing> {
    const listings = await Promise.all(this.#drivers.map((driver) => driver.listDevices()));
    const owners = new Map<string, Driver>();
    const devices: DriverDevice[] = [];
    listings.forEach((listing, index) => {
      const driver = this.#drivers[index]!;
      for (const device of listing.devices) {
        if (owners.has(device.id)) continue; // the first driver to list an id keeps it
        owners.set(device.id, driver);
        devices.push(device);
      }
    });
    this.#owners = owners;
    const makers = new Map<string, Driver>();
    listings.forEach((listing, index) => {
      for (const model of listing.makeable ?? []) {
        const key = `${model.platform}/${model.model}`;
        if (!makers.has(key)) makers.set(key, this.#drivers[index]!);
      }
    });
    this.#makers = makers;
    const makeable = listings.flatMap((listing) => listing.makeable ?? []);
    const problems = listings.flatMap((listing) => listing.provisionProblem ?? []);
    return {
      catalog: mergeCatalogs(listings.map((listing) => listing.catalog)),
      devices,
      ...(makeable.length > 0 ? { makeable } : {}),
      ...(problems.length > 0 ? { provisionProblem: problems.join('; ') } : {}),
    };
  }

  /** Made by the driver that listed the model as makeable; it owns the device from then. */
  async create(want: DeviceToMake, name: string): Promise<DriverDevice> {
    const maker = this.#makers.get(`${want.platform}/${want.model}`);
    if (maker?.create === undefined) {
      throw new DriverError(`no driver makes a ${want.platform} ${want.model}`);
    }
    const device = await maker.create(want, name);
    this.#owners.set(device.id, maker);
    return device;
  }

  delete(device: DriverDevice): Promise<void> {
    const owner = this.#owner(device);
    if (owner.delete === undefined) {
      return Promise.reject(new DriverError(`${owner.kind} does not delete devices`));
    }
    return owner.delete(device);
  }

  boot(device: DriverDevice): Promise<void> {
    return this.#owner(device).boot(device);
  }

  shutdown(device: DriverDevice): Promise<void> {
    return this.#owner(device).shutdown(device);
  }

  erase(device: DriverDevice): Promise<void> {
    return this.#owner(device).erase(device);
  }

  readResetBaseline(device: DriverDevice): Promise<ResetBaseline> {
    return this.#owner(device).readResetBaseline(device);
  }

  reset(device: DriverDevice, baseline: ResetBaseline | undefined): Promise<void> {
    return this.#owner(device).reset(device, baseline);
  }

  readPresence(device: DriverDevice): Promise<Presence> {
    return this.#owner(device).readPresence(device);
  }

  /** The owning driver's check; a driver without one relies on its listing (passes here). */
  async checkDevice(device: DriverDevice): Promise<void> {
    const owner = this.#owner(device);
    await owner.checkDevice?.(device);
  }

  async checkHealth(): Promise<void> {
    const results = await Promise.allSettled(this.#drivers.map((driver) => driver.checkHealth()));
    const failures = results.flatMap((result, index) =>
      result.status === 'rejected'
        ? [`${this.#drivers[index]!.kind}: ${String((result.reason as Error).message)}`]
        : [],
    );
    if (failures.length > 0) throw new DriverError(failures.join('; '));
  }

  /** Each driver's own place, one after another (a doctor run is not in a hurry). */
  async inspect(): Promise<DoctorInspection> {
    const combined: DoctorInspection = { findings: [], tallies: [] };
    for (const driver of this.#drivers) {
      if (driver.inspect === undefined) continue;
      const inspection = await driver.inspect();
      combined.findings.push(...inspection.findings);
      combined.tallies.push(...inspection.tallies);
    }
    return combined;
  }

  /** Each finding goes to the driver that reported it (its `source`). */
  async repair(findings: readonly DoctorFinding[]): Promise<DoctorRepair[]> {
    const repairs: DoctorRepair[] = [];
    for (const driver of this.#drivers) {
      const mine = findings.filter((finding) => finding.source === driver.kind);
      if (mine.length > 0 && driver.repair !== undefined) {
        repairs.push(...(await driver.repair(mine)));
      }
    }
    return repairs;
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    const refusal = checkToolFits(tool, device);
    if (refusal) return refusal;
    const owner = this.#owners.get(device.id);
    if (owner === undefined) {
      return { ok: false, code: 'UNAVAILABLE', message: `no driver lists ${device.id}` };
    }
    return owner.execArgv(tool, args, device);
  }

  #owner(device: DriverDevice): Driver {
    const owner = this.#owners.get(device.id);
    if (owner === undefined) throw new DriverError(`no driver lists ${device.id}`);
    return owner;
  }
}
