// Test-only: worker views and requests that read as a story. `aWorker('wrk-a', drained)` is a
// worker that would take anything, changed by each change given after its name.
import type { Device, DeviceSpec, Platform, Presence, WorkerStatus } from '../../api/index.js';
import type { Connection, WorkerView } from './types.js';

interface DraftView {
  name: string;
  connection: Connection;
  drained: boolean;
  status: WorkerStatus | undefined;
}

/** One change to a fresh worker; it may assume the status is there unless it removes it. */
export type WorkerChange = (worker: DraftView) => void;

export const IPHONE = 'iPhone 16';
export const IPHONE_PRO = 'iPhone 16 Pro';
export const IPAD = 'iPad Pro 13-inch (M4)';
export const PIXEL = 'Pixel 8';

/** Every request the stories use: the platform, then what they ask for. */
export const requests = {
  iphone: { platform: 'ios', model: IPHONE },
  iphoneOn18: { platform: 'ios', model: IPHONE, os: '18.4' },
  ipad: { platform: 'ios', model: IPAD },
  anyIosTablet: { platform: 'ios', class: 'tablet' },
  pixel: { platform: 'android', model: PIXEL },
  physicalIphone: { platform: 'ios', model: IPHONE, physical: true },
  anyPhysicalIos: { platform: 'ios', physical: true },
  physicalIosTablet: { platform: 'ios', class: 'tablet', physical: true },
  physicalAndroid: { platform: 'android', physical: true },
} as const satisfies Record<string, DeviceSpec>;

function status(): WorkerStatus {
  return {
    protocol: 1,
    agentVersion: '0.1.0',
    health: 'running',
    capabilities: [],
    catalog: {
      platforms: ['ios', 'android'],
      models: [
        { name: IPHONE, platform: 'ios', class: 'phone' },
        { name: IPHONE_PRO, platform: 'ios', class: 'phone' },
        { name: IPAD, platform: 'ios', class: 'tablet' },
        { name: PIXEL, platform: 'android', class: 'phone' },
      ],
      runtimes: [
        { platform: 'ios', version: '18.4' },
        { platform: 'android', version: '34' },
      ],
    },
    capacity: {
      global: { limit: 8, running: 0, evictable: 0 },
      platforms: {
        ios: { limit: 4, running: 0, evictable: 0, atRamBudget: false },
        android: { limit: 4, running: 0, evictable: 0, atRamBudget: false },
      },
    },
    queueDepth: 0,
    physicalQueueDepth: 0,
    queue: [],
    devices: [],
  };
}

/** A connected, running worker with free slots that serves iOS and Android, changed as told. */
export function aWorker(name: string, ...changes: WorkerChange[]): WorkerView {
  const worker: DraftView = { name, connection: 'connected', drained: false, status: status() };
  for (const change of changes) change(worker);
  return worker;
}

function statusOf(worker: DraftView): WorkerStatus {
  if (worker.status === undefined) throw new Error(`${worker.name} has no status to change`);
  return worker.status;
}

function platformOf(worker: DraftView, platform: Platform) {
  const capacity = statusOf(worker).capacity?.platforms[platform];
  if (capacity === undefined) throw new Error(`${worker.name} has no ${platform} capacity`);
  return capacity;
}

// --- Connection and operator state ---

export const disconnected: WorkerChange = (worker) => {
  worker.connection = 'disconnected';
};
export const incompatible: WorkerChange = (worker) => {
  worker.connection = 'incompatible';
};
export const drained: WorkerChange = (worker) => {
  worker.drained = true;
};

// --- What the agent has read ---

/** The agent has written no status yet. */
export const unread: WorkerChange = (worker) => {
  worker.status = undefined;
};
export const catalogNotRead: WorkerChange = (worker) => {
  statusOf(worker).catalog = undefined;
};
export const capacityNotRead: WorkerChange = (worker) => {
  statusOf(worker).capacity = undefined;
};
export function health(value: WorkerStatus['health']): WorkerChange {
  return (worker) => {
    statusOf(worker).health = value;
  };
}
export function ownQueue(depth: number, physicalDepth = 0): WorkerChange {
  return (worker) => {
    statusOf(worker).queueDepth = depth;
    statusOf(worker).physicalQueueDepth = physicalDepth;
  };
}
export function capabilities(...names: string[]): WorkerChange {
  return (worker) => {
    statusOf(worker).capabilities.push(...names.map((name) => ({ name, available: true })));
  };
}
export function unavailableCapability(name: string): WorkerChange {
  return (worker) => {
    statusOf(worker).capabilities.push({ name, available: false });
  };
}

// --- Catalog ---

/** Serves no platform but this one (catalog and capacity). */
export function servesOnly(platform: Platform): WorkerChange {
  return (worker) => {
    const { catalog, capacity } = statusOf(worker);
    if (catalog) {
      catalog.platforms = [platform];
      catalog.models = catalog.models.filter((model) => model.platform === platform);
      catalog.runtimes = catalog.runtimes.filter((runtime) => runtime.platform === platform);
    }
    if (capacity) capacity.platforms = { [platform]: capacity.platforms[platform] };
  };
}
export function withoutModel(name: string): WorkerChange {
  return (worker) => {
    const catalog = statusOf(worker).catalog;
    if (catalog) catalog.models = catalog.models.filter((model) => model.name !== name);
  };
}
export function withoutRuntimes(platform: Platform): WorkerChange {
  return (worker) => {
    const catalog = statusOf(worker).catalog;
    if (catalog) catalog.runtimes = catalog.runtimes.filter((r) => r.platform !== platform);
  };
}

// --- Capacity ---

/** Every running slot of the platform in use; `evictable` of them idle warm simulators. */
export function platformFull(platform: Platform, evictable = 0): WorkerChange {
  return (worker) => {
    const capacity = platformOf(worker, platform);
    capacity.running = capacity.limit;
    capacity.evictable = evictable;
  };
}
/** Every global running slot in use; `evictable` of them idle warm simulators. */
export function globalFull(evictable = 0): WorkerChange {
  return (worker) => {
    const global = statusOf(worker).capacity?.global;
    if (global === undefined) throw new Error(`${worker.name} has no capacity`);
    global.running = global.limit;
    global.evictable = evictable;
  };
}
/** Exactly `free` running slots free on the platform (and enough globally). */
export function freeSlots(platform: Platform, free: number): WorkerChange {
  return (worker) => {
    const capacity = platformOf(worker, platform);
    capacity.running = capacity.limit - free;
  };
}
export function atRamBudget(platform: Platform): WorkerChange {
  return (worker) => {
    platformOf(worker, platform).atRamBudget = true;
  };
}

// --- Devices ---

let nextDevice = 1;

interface DeviceShape {
  model?: string;
  platform?: Platform;
  os?: string;
  class?: Device['class'];
  state?: Device['state'];
  presence?: Presence;
}

function device(physical: boolean, shape: DeviceShape): Device {
  const model = shape.model ?? IPHONE;
  return {
    id: `${physical ? 'phone' : 'sim'}-${nextDevice++}`,
    name: model,
    model,
    platform: shape.platform ?? 'ios',
    os: shape.os ?? (shape.platform === 'android' ? '34' : '18.4'),
    physical,
    class: shape.class ?? (model.startsWith('iPad') ? 'tablet' : 'phone'),
    state: shape.state ?? 'ready',
    ...(shape.presence ? { presence: shape.presence } : {}),
  };
}

/** A simulator or emulator, ready unless told otherwise. */
export function simulator(shape: DeviceShape = {}): Device {
  return device(false, shape);
}
/** A physical device plugged into the host, ready unless told otherwise. */
export function physicalDevice(shape: DeviceShape = {}): Device {
  return device(true, shape);
}
export function devices(...list: Device[]): WorkerChange {
  return (worker) => {
    statusOf(worker).devices.push(...list);
  };
}
