// The agent's own grant decision (DESIGN.md §5), a pure function: given the devices, the catalog,
// the limits and a request, which device to grant (warm or cold, and what to evict), or why not.
// The agent's answer always wins over the controller's guess from a possibly stale view.
//
// Capacity model. A *running* device is a simulator or emulator that is booting, ready (booted
// and idle: "warm"), leased or reclaiming. Physical devices take no slot and no RAM. Limits:
//   - global: at most `limits.running` running devices, all platforms together;
//   - per platform: at most `limits.platforms.<p>.running`;
//   - RAM per platform: the running devices' RAM costs together stay within `ramBudgetMb`. A
//     device costs `limits.modelRamMb[model]` (any case) if given, else the platform's
//     `ramPerDeviceMb`.
// An idle warm device is *evictable*: shut down to make room for a cold boot of another model.
import {
  describeRequest,
  fitsDevice,
  fitsOneMore,
  hasPlatform,
  hasRuntime,
  isEnrolledMatch,
  isPickableMatch,
  listsModel,
  noPhysicalMatch,
  platformName,
  type CannotServeCode,
  type Capacity,
  type CapacityReason,
  type Catalog,
  type Device,
  type DeviceSpec,
  type Platform,
  type PlatformCapacity,
  type ReasonEntry,
} from '../api/index.js';
import type { Limits, PlatformLimits } from './config.js';
import type { DeviceToMake, MakeableModel } from './drivers/driver.js';
import { chooseToMake, newDevice } from './make-choice.js';

/** Where a device is in the agent's hands; `shutdown` is a virtual device free to cold-boot. */
export type InventoryState = Device['state'] | 'shutdown' | 'deleting';

/** A device as the planner sees it: the view's fields, its agent state, when it became ready. */
export interface PlannedDevice extends Omit<Device, 'state'> {
  state: InventoryState;
  /** When it last became ready; the idle warm device ready the longest is evicted first. */
  readySinceMs?: number;
  /** When it was last seen shut down (first listed so, or shut down since): its idle time. */
  shutDownSinceMs?: number;
  /** Made by the agent in its own place: idle, it may be deleted. */
  deletable?: boolean;
  /** Why and since when, for a quarantined device, with its retries and the next one's time. */
  quarantinedFor?: { reason: string; sinceMs: number; retries?: number; nextRetryAtMs?: number };
}

export interface PlanInput {
  spec: DeviceSpec;
  catalog: Catalog;
  capabilities: readonly { name: string; available: boolean }[];
  devices: readonly PlannedDevice[];
  limits: Limits;
  /** Requests in the agent's local queue that this one must not overtake (fleet leases only). */
  localWaiting?: readonly DeviceSpec[];
  /** What the drivers can make a new device of (models with their OS versions). */
  makeable?: readonly MakeableModel[];
  /** Free space is low where devices live: nothing is made (what exists is still granted). */
  diskLow?: boolean;
}

export interface AgentRefusal {
  code: 'NO_CAPACITY' | CannotServeCode;
  capacityReason?: CapacityReason;
  message: string;
  details?: Record<string, string>;
}

export type Plan =
  | { kind: 'warm'; device: PlannedDevice }
  | { kind: 'cold'; device: PlannedDevice; evict: PlannedDevice[] }
  /** No device of the request is free to boot: make one (then boot it), after evicting these. */
  | { kind: 'create'; want: DeviceToMake; evict: PlannedDevice[] }
  /** Physical: the pickable matches in order; the grant reads presence and takes the first present. */
  | { kind: 'physical'; candidates: PlannedDevice[] }
  | { kind: 'refuse'; refusal: AgentRefusal };

// --- capacity ---------------------------------------------------------------------------------

const RUNNING_STATES: ReadonlySet<InventoryState> = new Set([
  'booting',
  'ready',
  'leased',
  'reclaiming',
]);

export function isRunning(device: PlannedDevice): boolean {
  return !device.physical && RUNNING_STATES.has(device.state);
}

export function isEvictable(device: PlannedDevice): boolean {
  return !device.physical && device.state === 'ready';
}

const DEFAULT_RAM_PER_DEVICE_MB = 2048;

export function limitsFor(platform: Platform, limits: Limits): PlatformLimits {
  return (
    limits.platforms[platform] ?? {
      running: limits.running,
      ramPerDeviceMb: DEFAULT_RAM_PER_DEVICE_MB,
    }
  );
}

export function ramCostMb(
  device: Pick<PlannedDevice, 'model' | 'platform'>,
  limits: Limits,
): number {
  const wanted = device.model.toLowerCase();
  for (const [model, megabytes] of Object.entries(limits.modelRamMb)) {
    if (model.toLowerCase() === wanted) return megabytes;
  }
  return limitsFor(device.platform, limits).ramPerDeviceMb;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/**
 * The capacity the view reports. A platform is at its RAM budget when even after evicting every
 * idle warm device of it, one more device at the platform's `ramPerDeviceMb` would not fit.
 */
export function measureCapacity(
  devices: readonly PlannedDevice[],
  platforms: readonly Platform[],
  limits: Limits,
): Capacity {
  const running = devices.filter(isRunning);
  const capacity: Capacity = {
    global: {
      limit: limits.running,
      running: running.length,
      evictable: running.filter(isEvictable).length,
    },
    platforms: {},
  };
  for (const platform of platforms) {
    const own = running.filter((device) => device.platform === platform);
    const platformLimits = limitsFor(platform, limits);
    const budget = platformLimits.ramBudgetMb;
    const committedRam = sum(
      own.filter((device) => !isEvictable(device)).map((device) => ramCostMb(device, limits)),
    );
    const entry: PlatformCapacity = {
      limit: platformLimits.running,
      running: own.length,
      evictable: own.filter(isEvictable).length,
      atRamBudget: budget !== undefined && committedRam + platformLimits.ramPerDeviceMb > budget,
    };
    capacity.platforms[platform] = entry;
  }
  return capacity;
}

/** The first limit one more running `device` would break, with `evicted` shut down first. */
function missingRoom(
  device: PlannedDevice,
  devices: readonly PlannedDevice[],
  evicted: readonly PlannedDevice[],
  limits: Limits,
): CapacityReason | undefined {
  const gone = new Set(evicted.map((entry) => entry.id));
  const running = devices.filter((entry) => isRunning(entry) && !gone.has(entry.id));
  const own = running.filter((entry) => entry.platform === device.platform);
  const platformLimits = limitsFor(device.platform, limits);
  if (!fitsOneMore(own.length, platformLimits.running)) return 'platform-running-limit';
  if (!fitsOneMore(running.length, limits.running)) return 'global-running-limit';
  const budget = platformLimits.ramBudgetMb;
  if (budget !== undefined) {
    const used = sum(own.map((entry) => ramCostMb(entry, limits)));
    if (used + ramCostMb(device, limits) > budget) return 'ram-budget';
  }
  return undefined;
}

/**
 * Room for a cold boot of `device`: the fewest idle warm devices to evict, chosen greedily. A
 * platform slot or RAM needs a device of the same platform; a global slot takes any. The one
 * ready the longest goes first. Without enough, the reason is the limit still in the way.
 */
export function findRoom(
  device: PlannedDevice,
  devices: readonly PlannedDevice[],
  limits: Limits,
): { evict: PlannedDevice[] } | { reason: CapacityReason } {
  const evictable = devices
    .filter(isEvictable)
    .sort((a, b) => (a.readySinceMs ?? 0) - (b.readySinceMs ?? 0) || a.id.localeCompare(b.id));
  const evict: PlannedDevice[] = [];
  for (;;) {
    const reason = missingRoom(device, devices, evict, limits);
    if (reason === undefined) return { evict };
    const samePlatformOnly = reason !== 'global-running-limit';
    const next = evictable.find(
      (candidate) =>
        !evict.includes(candidate) && (!samePlatformOnly || candidate.platform === device.platform),
    );
    if (next === undefined) return { reason };
    evict.push(next);
  }
}

// --- the plan ---------------------------------------------------------------------------------

function refuse(
  code: AgentRefusal['code'],
  message: string,
  extra: Partial<AgentRefusal> = {},
): Plan {
  return { kind: 'refuse', refusal: { code, message, ...extra } };
}

function byId(a: PlannedDevice, b: PlannedDevice): number {
  return a.id.localeCompare(b.id);
}

function missingCapability(input: PlanInput): string | undefined {
  const available = new Set(
    input.capabilities.filter((entry) => entry.available).map((entry) => entry.name),
  );
  return input.spec.requires?.find((name) => !available.has(name));
}

export function plan(input: PlanInput): Plan {
  const { spec, catalog } = input;
  if (!hasPlatform(catalog, spec)) {
    return refuse('NO_DRIVER', `this host has no driver for ${platformName(spec.platform)}`);
  }
  return spec.physical ? planPhysical(input) : planVirtual(input);
}

function planPhysical(input: PlanInput): Plan {
  const { spec, devices } = input;
  const enrolled = devices.filter((device) => isEnrolledMatch(spec, asDevice(device)));
  if (enrolled.length === 0) {
    const { message, details } = noPhysicalMatch(spec);
    return refuse('UNKNOWN_MODEL', message, { details });
  }
  const capability = missingCapability(input);
  if (capability !== undefined) {
    return refuse('CAPABILITY_MISSING', `this host does not offer ${capability}`);
  }
  const pickable = enrolled.filter((device) => isPickableMatch(spec, asDevice(device)));
  // A device a waiting local request could take is held for it (fairness: local goes first).
  const held = (device: PlannedDevice): boolean =>
    (input.localWaiting ?? []).some((local) => local.physical && fitsDevice(local, device));
  const candidates = pickable.filter((device) => !held(device));
  if (candidates.length > 0) {
    // Devices read present first; those never read yet after them. Then by id, for a stable pick.
    const rank = (device: PlannedDevice): number => (device.presence?.present ? 0 : 1);
    return {
      kind: 'physical',
      candidates: candidates.sort((a, b) => rank(a) - rank(b) || byId(a, b)),
    };
  }
  if (pickable.length > 0) {
    return refuse(
      'NO_CAPACITY',
      `every ready ${describeRequest(spec)} device is held for a local request on this host`,
    );
  }
  const unplugged = enrolled.some(
    (device) => device.state === 'ready' && device.presence?.present === false,
  );
  if (unplugged) {
    return refuse('NO_CAPACITY', `no matching ${describeRequest(spec)} device is present`, {
      capacityReason: 'device-not-present',
    });
  }
  return refuse(
    'NO_CAPACITY',
    `every matching ${describeRequest(spec)} device is leased, absent or being reclaimed`,
  );
}

function planVirtual(input: PlanInput): Plan {
  const { spec, catalog, devices, limits } = input;
  if (!listsModel(catalog, spec)) {
    return refuse(
      'UNKNOWN_MODEL',
      `this host offers no ${describeRequest(spec)} simulator or emulator`,
    );
  }
  if (!hasRuntime(catalog, spec)) {
    return refuse(
      'RUNTIME_MISSING',
      `this host has no ${platformName(spec.platform)} ${spec.os ?? ''} runtime`.trimEnd(),
    );
  }
  const capability = missingCapability(input);
  if (capability !== undefined) {
    return refuse('CAPABILITY_MISSING', `this host does not offer ${capability}`);
  }
  const fitting = devices.filter((device) => !device.physical && fitsDevice(spec, device));
  const toMake = chooseToMake(spec, input.makeable ?? []);
  if (fitting.length === 0 && toMake === undefined) {
    // The model and the runtime are here, but not together: no such device exists or can be made.
    return refuse('RUNTIME_MISSING', `this host has no ${describeRequest(spec)} device to boot`);
  }
  const waitingLocal = (input.localWaiting ?? []).filter(
    (local) => !local.physical && local.platform === spec.platform,
  );
  if (waitingLocal.length > 0) {
    return refuse(
      'NO_CAPACITY',
      `${waitingLocal.length} local request(s) for ${platformName(spec.platform)} wait on this host and go first`,
    );
  }

  const warm = fitting.filter((device) => device.state === 'ready').sort(byId)[0];
  if (warm !== undefined) return { kind: 'warm', device: warm };

  // A device that exists boots sooner than one made first, so those are tried before making one.
  let firstReason: CapacityReason | undefined;
  for (const device of fitting.filter((candidate) => candidate.state === 'shutdown').sort(byId)) {
    const room = findRoom(device, devices, limits);
    if ('evict' in room) return { kind: 'cold', device, evict: room.evict };
    firstReason ??= room.reason;
  }
  if (toMake !== undefined && input.diskLow === true) {
    firstReason ??= 'disk-low';
  } else if (toMake !== undefined) {
    const room = findRoom(newDevice(toMake, input.makeable ?? []), devices, limits);
    if ('evict' in room) return { kind: 'create', want: toMake, evict: room.evict };
    firstReason ??= room.reason;
  }
  if (firstReason !== undefined) {
    return refuse('NO_CAPACITY', capacityMessage(firstReason, spec.platform), {
      capacityReason: firstReason,
    });
  }
  // No device of the request is free to boot and none can be made; if a limit would stop one
  // anyway, say which.
  const room = findRoom(fitting[0]!, devices, limits);
  if ('reason' in room) {
    return refuse('NO_CAPACITY', capacityMessage(room.reason, spec.platform), {
      capacityReason: room.reason,
    });
  }
  const quarantined = fitting.every((device) => device.state === 'quarantined');
  return refuse(
    'NO_CAPACITY',
    quarantined
      ? `every ${describeRequest(spec)} device on this host is quarantined`
      : `every ${describeRequest(spec)} device on this host is in use`,
  );
}

function capacityMessage(reason: CapacityReason, platform: Platform): string {
  switch (reason) {
    case 'platform-running-limit':
      return `${platformName(platform)} is at its running limit on this host`;
    case 'global-running-limit':
      return 'this host is at its running limit';
    case 'ram-budget':
      return `${platformName(platform)} is at its RAM budget on this host`;
    case 'device-not-present':
      return 'no matching device is present';
    case 'disk-low':
      return 'this host is low on disk space: it makes no new device until it has room';
  }
}

/** The view's shape of a planned device, for the api's match rules. */
function asDevice(device: PlannedDevice): Device {
  const state =
    device.state === 'shutdown' ? 'ready' : device.state === 'deleting' ? 'deleted' : device.state;
  return { ...device, state };
}

/** The one reason a local queue entry shows for a NO_CAPACITY answer (DESIGN.md §3.2). */
export function waitingReasonFor(refusal: AgentRefusal, spec: DeviceSpec): ReasonEntry {
  if (refusal.capacityReason !== undefined) {
    return { reason: 'full', capacityReason: refusal.capacityReason };
  }
  return { reason: spec.physical ? 'no-free-physical' : 'full' };
}
