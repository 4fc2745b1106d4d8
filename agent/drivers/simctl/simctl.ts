// iOS simulators through `xcrun simctl` (macOS). The listing is one JSON command; boot, shutdown
// and erase take the simulator's UDID; exec inserts the UDID where simctl expects the device.
import { z } from 'zod';
import type { Catalog, DeviceClass } from '../../../api/index.js';
import {
  checkExecArgs,
  checkToolFits,
  DriverError,
  refuseTool,
  type DeviceListing,
  type Driver,
  type DriverDevice,
  type ExecPlan,
  type PowerState,
} from '../driver.js';
import { createCommandRunner, runChecked, type CommandRunner } from '../command.js';

// --- The JSON of `xcrun simctl list -j devices runtimes devicetypes`, bounded -----------------

const SimDeviceType = z.object({
  identifier: z.string().max(256),
  name: z.string().max(128),
  productFamily: z.string().max(64).optional(),
});

const SimRuntime = z.object({
  identifier: z.string().max(256),
  version: z.string().max(32),
  platform: z.string().max(32).optional(),
  name: z.string().max(128).optional(),
  isAvailable: z.boolean().default(true),
});

const SimDevice = z.object({
  udid: z.string().min(1).max(128),
  name: z.string().max(128),
  state: z.string().max(64),
  isAvailable: z.boolean().default(true),
  deviceTypeIdentifier: z.string().max(256).optional(),
});

export const SimctlList = z.object({
  devicetypes: z.array(SimDeviceType).max(2000).default([]),
  runtimes: z.array(SimRuntime).max(500).default([]),
  devices: z.record(z.string().max(256), z.array(SimDevice).max(2000)).default({}),
});
export type SimctlList = z.infer<typeof SimctlList>;

const MAX_SIMULATORS = 4000;

function isIosRuntime(runtime: z.infer<typeof SimRuntime>): boolean {
  // Older Xcodes have no `platform`; their identifiers still name it (SimRuntime.iOS-17-5).
  return runtime.platform !== undefined
    ? runtime.platform === 'iOS'
    : /\.SimRuntime\.iOS-/.test(runtime.identifier);
}

function classOfDeviceType(deviceType: z.infer<typeof SimDeviceType>): DeviceClass | undefined {
  const family = deviceType.productFamily ?? (/^iPad/.test(deviceType.name) ? 'iPad' : 'iPhone');
  if (family === 'iPhone') return 'phone';
  if (family === 'iPad') return 'tablet';
  return undefined; // Watch, TV, Vision: not served
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

/** The iOS simulators and catalog in one simctl listing. Watch, TV and unavailable ones are left out. */
export function parseSimctlList(json: string): DeviceListing {
  const list = SimctlList.parse(JSON.parse(json));
  const deviceTypes = new Map(list.devicetypes.map((type) => [type.identifier, type]));
  const runtimes = new Map(
    list.runtimes
      .filter((runtime) => runtime.isAvailable && isIosRuntime(runtime))
      .map((runtime) => [runtime.identifier, runtime]),
  );

  const devices: DriverDevice[] = [];
  for (const [runtimeId, simulators] of Object.entries(list.devices)) {
    const runtime = runtimes.get(runtimeId);
    if (runtime === undefined) continue;
    for (const simulator of simulators) {
      if (!simulator.isAvailable) continue;
      const deviceType = deviceTypes.get(simulator.deviceTypeIdentifier ?? '');
      if (deviceType === undefined) continue;
      const deviceClass = classOfDeviceType(deviceType);
      if (deviceClass === undefined) continue;
      devices.push({
        id: simulator.udid,
        name: simulator.name,
        model: deviceType.name,
        platform: 'ios',
        os: runtime.version,
        physical: false,
        class: deviceClass,
        power: powerOf(simulator.state),
      });
      if (devices.length > MAX_SIMULATORS) {
        throw new DriverError(`simctl lists more than ${MAX_SIMULATORS} simulators`);
      }
    }
  }

  const models = new Map<string, Catalog['models'][number]>();
  for (const device of devices) {
    models.set(device.model, { name: device.model, platform: 'ios', class: device.class });
  }
  const catalog: Catalog = {
    platforms: ['ios'],
    models: [...models.values()].sort((a, b) => a.name.localeCompare(b.name)).slice(0, 256),
    runtimes: [...runtimes.values()]
      .map((runtime) => ({ platform: 'ios' as const, version: runtime.version }))
      .slice(0, 256),
  };
  return { catalog, devices };
}

// --- exec -------------------------------------------------------------------------------------

/**
 * The simctl subcommands a lease holder may run: each takes the device as its first argument, so
 * `simctl <subcommand> <args…>` becomes `xcrun simctl <subcommand> <udid> <args…>`. Lifecycle
 * subcommands (boot, shutdown, erase, delete, clone, create, rename, upgrade) and ones that read
 * other devices (list) stay with the agent.
 */
export const SIMCTL_DEVICE_SUBCOMMANDS = [
  'addmedia',
  'appinfo',
  'get_app_container',
  'getenv',
  'icloud_sync',
  'install',
  'io',
  'keychain',
  'launch',
  'listapps',
  'location',
  'logverbose',
  'openurl',
  'pbcopy',
  'pbpaste',
  'privacy',
  'push',
  'spawn',
  'status_bar',
  'terminate',
  'ui',
  'uninstall',
] as const;

export function simctlExecArgv(args: readonly string[], device: DriverDevice): ExecPlan {
  const refusal = checkToolFits('simctl', device) ?? checkExecArgs(args);
  if (refusal) return refusal;
  const [subcommand, ...rest] = args;
  if (subcommand === undefined) return refuseTool('simctl needs a subcommand, e.g. launch');
  if (!(SIMCTL_DEVICE_SUBCOMMANDS as readonly string[]).includes(subcommand)) {
    return refuseTool(
      `simctl ${subcommand} is not allowed on a lease; allowed: ${SIMCTL_DEVICE_SUBCOMMANDS.join(', ')}`,
    );
  }
  return { ok: true, argv: ['xcrun', 'simctl', subcommand, device.id, ...rest] };
}

// --- the driver -------------------------------------------------------------------------------

export interface SimctlDriverOptions {
  run?: CommandRunner;
  /** How long a boot may take, up to the end of `bootstatus`. */
  bootTimeoutMs?: number;
}

export class SimctlDriver implements Driver {
  readonly kind = 'simctl';
  readonly platforms = ['ios'] as const;
  readonly #run: CommandRunner;
  readonly #bootTimeoutMs: number;

  constructor(options: SimctlDriverOptions = {}) {
    this.#run = options.run ?? createCommandRunner();
    this.#bootTimeoutMs = options.bootTimeoutMs ?? 180_000;
  }

  async listDevices(): Promise<DeviceListing> {
    const result = await runChecked(this.#run, [
      'xcrun',
      'simctl',
      'list',
      '-j',
      'devices',
      'runtimes',
      'devicetypes',
    ]);
    try {
      return parseSimctlList(result.stdout);
    } catch (error) {
      throw new DriverError(`simctl list: unreadable output`, { cause: error });
    }
  }

  async boot(device: DriverDevice): Promise<void> {
    this.#requireSimulator(device, 'boot');
    // bootstatus -b boots the simulator if needed and returns once it has finished booting.
    await runChecked(this.#run, ['xcrun', 'simctl', 'bootstatus', device.id, '-b'], {
      timeoutMs: this.#bootTimeoutMs,
    });
  }

  async shutdown(device: DriverDevice): Promise<void> {
    this.#requireSimulator(device, 'shut down');
    const result = await this.#run(['xcrun', 'simctl', 'shutdown', device.id]);
    // simctl refuses to shut down a simulator that is already down; that is what we wanted.
    if (result.exitCode !== 0 && !/current state: Shutdown/.test(result.stderr)) {
      throw new DriverError(
        `xcrun simctl shutdown ${device.id} exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500)}`,
      );
    }
  }

  async erase(device: DriverDevice): Promise<void> {
    // simctl erases only a shut-down simulator.
    await this.shutdown(device);
    await runChecked(this.#run, ['xcrun', 'simctl', 'erase', device.id]);
  }

  readResetBaseline(device: DriverDevice): Promise<never> {
    return Promise.reject(new DriverError(`simctl has no physical device (${device.id})`));
  }

  reset(device: DriverDevice): Promise<never> {
    return Promise.reject(new DriverError(`simctl has no physical device (${device.id})`));
  }

  readPresence(device: DriverDevice): Promise<never> {
    return Promise.reject(new DriverError(`simctl has no physical device (${device.id})`));
  }

  async checkHealth(): Promise<void> {
    await runChecked(this.#run, ['xcrun', 'simctl', 'list', '-j', 'runtimes'], {
      timeoutMs: 30_000,
    });
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    return checkToolFits(tool, device) ?? simctlExecArgv(args, device);
  }

  #requireSimulator(device: DriverDevice, action: string): void {
    if (device.physical || device.platform !== 'ios') {
      throw new DriverError(`simctl cannot ${action} ${device.id}: not an iOS simulator`);
    }
  }
}
