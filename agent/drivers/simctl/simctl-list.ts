// What `xcrun simctl list -j` says, read into the driver's shapes: the simulators it lists, the
// catalog, and what the host can make (device types × installed iOS runtimes, narrowed by the
// host's provision config). Pure: no tool runs here.
import { z } from 'zod';
import { osMatches, type Catalog, type DeviceClass } from '../../../api/index.js';
import {
  DriverError,
  type DeviceListing,
  type DriverDevice,
  type MakeableModel,
  type PowerState,
} from '../driver.js';

// --- The JSON of `xcrun simctl list -j [devices] [runtimes] [devicetypes]`, bounded ----------

const SimDeviceType = z.object({
  identifier: z.string().max(256),
  name: z.string().max(128),
  productFamily: z.string().max(64).optional(),
  minRuntimeVersionString: z.string().max(32).optional(),
  maxRuntimeVersionString: z.string().max(32).optional(),
});
export type SimDeviceType = z.infer<typeof SimDeviceType>;

const SimRuntime = z.object({
  identifier: z.string().max(256),
  version: z.string().max(32),
  platform: z.string().max(32).optional(),
  name: z.string().max(128).optional(),
  isAvailable: z.boolean().default(true),
  /** Xcode 15+: the device types this runtime can make (absent or empty before). */
  supportedDeviceTypes: z
    .array(
      z.object({
        identifier: z.string().max(256),
        name: z.string().max(128),
        productFamily: z.string().max(64).optional(),
      }),
    )
    .max(2000)
    .optional(),
});
export type SimRuntime = z.infer<typeof SimRuntime>;

const SimDevice = z.object({
  udid: z.string().min(1).max(128),
  name: z.string().max(128),
  state: z.string().max(64),
  isAvailable: z.boolean().default(true),
  /** Why an unavailable simulator is so ("runtime profile not found…"); the doctor shows it. */
  availabilityError: z.string().max(512).optional(),
  deviceTypeIdentifier: z.string().max(256).optional(),
});

export const SimctlList = z.object({
  devicetypes: z.array(SimDeviceType).max(2000).default([]),
  runtimes: z.array(SimRuntime).max(500).default([]),
  devices: z.record(z.string().max(256), z.array(SimDevice).max(2000)).default({}),
});
export type SimctlList = z.infer<typeof SimctlList>;

/** Parses and bounds one `simctl list -j` output; throws on anything else. */
export function readSimctlList(json: string): SimctlList {
  return SimctlList.parse(JSON.parse(json));
}

const MAX_SIMULATORS = 4000;
const MAX_CATALOG_ENTRIES = 256;

function isIosRuntime(runtime: SimRuntime): boolean {
  // Older Xcodes have no `platform`; their identifiers still name it (SimRuntime.iOS-17-5).
  return runtime.platform !== undefined
    ? runtime.platform === 'iOS'
    : /\.SimRuntime\.iOS-/.test(runtime.identifier);
}

/** The installed, available iOS runtimes of a listing. */
export function iosRuntimes(list: SimctlList): SimRuntime[] {
  return list.runtimes.filter((runtime) => runtime.isAvailable && isIosRuntime(runtime));
}

function classOfFamily(family: string | undefined, name: string): DeviceClass | undefined {
  const known = family ?? (/^iPad/.test(name) ? 'iPad' : 'iPhone');
  if (known === 'iPhone') return 'phone';
  if (known === 'iPad') return 'tablet';
  return undefined; // Watch, TV, Vision: not served
}

export function classOfDeviceType(deviceType: SimDeviceType): DeviceClass | undefined {
  return classOfFamily(deviceType.productFamily, deviceType.name);
}

function powerOf(state: string): PowerState {
  switch (state) {
    case 'Booted':
      return 'booted';
    case 'Shutdown':
      return 'shutdown';
    case 'Booting':
    case 'Shutting Down':
      return 'transitioning';
    default:
      return 'unavailable'; // "Creating" and anything newer we do not know
  }
}

/**
 * The available iOS simulators of `devices` (a listing's `devices` field), read against the host's
 * device types and runtimes; `keep` says which UDIDs the agent may see.
 */
export function simulatorsOf(
  host: SimctlList,
  devices: SimctlList['devices'],
  keep: (udid: string) => boolean = () => true,
): DriverDevice[] {
  const deviceTypes = new Map(host.devicetypes.map((type) => [type.identifier, type]));
  const runtimes = new Map(iosRuntimes(host).map((runtime) => [runtime.identifier, runtime]));
  const simulators: DriverDevice[] = [];
  for (const [runtimeId, entries] of Object.entries(devices)) {
    const runtime = runtimes.get(runtimeId);
    if (runtime === undefined) continue;
    for (const entry of entries) {
      if (!entry.isAvailable || !keep(entry.udid)) continue;
      const deviceType = deviceTypes.get(entry.deviceTypeIdentifier ?? '');
      if (deviceType === undefined) continue;
      const deviceClass = classOfDeviceType(deviceType);
      if (deviceClass === undefined) continue;
      simulators.push({
        id: entry.udid,
        name: entry.name,
        model: deviceType.name,
        platform: 'ios',
        os: runtime.version,
        physical: false,
        class: deviceClass,
        power: powerOf(entry.state),
      });
      if (simulators.length > MAX_SIMULATORS) {
        throw new DriverError(`simctl lists more than ${MAX_SIMULATORS} simulators`);
      }
    }
  }
  return simulators;
}

// --- What the host can make -------------------------------------------------------------------

/** The host config that narrows what the driver offers to make (config.provision). */
export interface ProvisionPolicy {
  enabled: boolean;
  /** Model names, any case; empty: every model. */
  models: readonly string[];
  /** OS versions or ranges ("18", "18.4", ">=17"); empty: every installed runtime. */
  os: readonly string[];
}

export const PROVISION_EVERYTHING: ProvisionPolicy = { enabled: true, models: [], os: [] };

/** One model × OS the host can make, with the identifiers `simctl create` takes. */
export interface MakeableEntry {
  model: string;
  class: DeviceClass;
  os: string;
  deviceTypeIdentifier: string;
  runtimeIdentifier: string;
}

function versionParts(text: string | undefined): number[] | undefined {
  if (text === undefined || !/^[0-9]+(\.[0-9]+)*$/.test(text)) return undefined;
  return text.split('.').map(Number);
}

function compareParts(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return Math.sign(difference);
  }
  return 0;
}

/** Without `supportedDeviceTypes`: the device type's own runtime bounds, when it states them. */
function deviceTypeFits(deviceType: SimDeviceType, runtime: SimRuntime): boolean {
  const version = versionParts(runtime.version);
  if (version === undefined) return true;
  const min = versionParts(deviceType.minRuntimeVersionString);
  const max = versionParts(deviceType.maxRuntimeVersionString);
  return (
    (min === undefined || compareParts(version, min) >= 0) &&
    (max === undefined || compareParts(version, max) <= 0)
  );
}

/** An OS entry of the config matches a runtime: osMatches ("18.4", ">=17"), or as a prefix ("18"). */
export function osAllowed(entry: string, version: string): boolean {
  const wanted = entry.trim();
  return osMatches(wanted, version) || version.startsWith(`${wanted}.`);
}

function sameModel(a: string, b: string): boolean {
  return a.localeCompare(b, undefined, { sensitivity: 'accent' }) === 0;
}

/** Every model × OS the host can make, narrowed by the policy; nothing when provisioning is off. */
export function makeableEntries(host: SimctlList, policy: ProvisionPolicy): MakeableEntry[] {
  if (!policy.enabled) return [];
  const entries: MakeableEntry[] = [];
  for (const runtime of iosRuntimes(host)) {
    if (policy.os.length > 0 && !policy.os.some((entry) => osAllowed(entry, runtime.version))) {
      continue;
    }
    const supported =
      runtime.supportedDeviceTypes !== undefined && runtime.supportedDeviceTypes.length > 0
        ? runtime.supportedDeviceTypes
        : host.devicetypes.filter((deviceType) => deviceTypeFits(deviceType, runtime));
    for (const deviceType of supported) {
      const deviceClass = classOfFamily(deviceType.productFamily, deviceType.name);
      if (deviceClass === undefined) continue;
      if (policy.models.length > 0 && !policy.models.some((m) => sameModel(m, deviceType.name))) {
        continue;
      }
      entries.push({
        model: deviceType.name,
        class: deviceClass,
        os: runtime.version,
        deviceTypeIdentifier: deviceType.identifier,
        runtimeIdentifier: runtime.identifier,
      });
    }
  }
  return entries;
}

/** The same entries as the Driver contract shows them: one per model, its OS versions in order. */
export function makeableModels(entries: readonly MakeableEntry[]): MakeableModel[] {
  const byModel = new Map<string, MakeableModel>();
  for (const entry of entries) {
    const model = byModel.get(entry.model) ?? {
      platform: 'ios' as const,
      model: entry.model,
      class: entry.class,
      os: [],
    };
    if (!model.os.includes(entry.os)) model.os.push(entry.os);
    byModel.set(entry.model, model);
  }
  const order = (a: string, b: string) =>
    compareParts(versionParts(a) ?? [], versionParts(b) ?? []) || a.localeCompare(b);
  return [...byModel.values()]
    .map((model) => ({ ...model, os: model.os.sort(order) }))
    .sort((a, b) => a.model.localeCompare(b.model));
}

/** The entry `create` uses for a model (any case) and an OS version (exact, as listed). */
export function findMakeable(
  entries: readonly MakeableEntry[],
  model: string,
  os: string,
): MakeableEntry | undefined {
  return entries.find((entry) => sameModel(entry.model, model) && entry.os === os);
}

// --- The listing -------------------------------------------------------------------------------

/** Catalog: models of the listed simulators ∪ models the host can make; installed iOS runtimes. */
export function catalogOf(
  host: SimctlList,
  devices: readonly DriverDevice[],
  makeable: readonly MakeableModel[],
): Catalog {
  const models = new Map<string, Catalog['models'][number]>();
  for (const device of devices) {
    models.set(device.model, { name: device.model, platform: 'ios', class: device.class });
  }
  for (const model of makeable) {
    models.set(model.model, { name: model.model, platform: 'ios', class: model.class });
  }
  return {
    platforms: ['ios'],
    models: [...models.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .slice(0, MAX_CATALOG_ENTRIES),
    runtimes: iosRuntimes(host)
      .map((runtime) => ({ platform: 'ios' as const, version: runtime.version }))
      .filter(
        (runtime, index, all) =>
          all.findIndex((other) => other.version === runtime.version) === index,
      )
      .slice(0, MAX_CATALOG_ENTRIES),
  };
}

/**
 * The iOS simulators, catalog and makeable models of one full listing (devices, runtimes and
 * device types). Watch, TV and unavailable simulators are left out.
 */
export function parseSimctlList(
  json: string,
  policy: ProvisionPolicy = PROVISION_EVERYTHING,
): DeviceListing {
  const list = readSimctlList(json);
  const devices = simulatorsOf(list, list.devices);
  const makeable = makeableModels(makeableEntries(list, policy));
  return { catalog: catalogOf(list, devices, makeable), devices, makeable };
}
