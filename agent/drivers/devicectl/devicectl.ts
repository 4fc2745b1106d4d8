// Physical iPhones and iPads through `xcrun devicectl` (macOS, Xcode 15+). devicectl writes its
// machine-readable answers to a file (--json-output), so every read goes through a temp file.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { DeviceClass, Presence } from '../../../api/index.js';
import {
  checkExecArgs,
  checkToolFits,
  DriverError,
  refuseTool,
  type DeviceListing,
  type Driver,
  type DriverDevice,
  type ExecPlan,
  type ResetBaseline,
} from '../driver.js';
import { createCommandRunner, runChecked, type CommandRunner } from '../command.js';

// --- `xcrun devicectl list devices --json-output <file>`, bounded ----------------------------

const DevicectlDevice = z.object({
  identifier: z.string().max(128).optional(),
  hardwareProperties: z.object({
    udid: z.string().min(1).max(128),
    marketingName: z.string().max(128).optional(),
    deviceType: z.string().max(64).optional(),
    productType: z.string().max(64).optional(),
    platform: z.string().max(32).optional(),
    reality: z.string().max(32).optional(),
  }),
  deviceProperties: z
    .object({
      name: z.string().max(128).optional(),
      osVersionNumber: z.string().max(32).optional(),
    })
    .default({}),
  connectionProperties: z
    .object({
      tunnelState: z.string().max(64).optional(),
      pairingState: z.string().max(64).optional(),
    })
    .default({}),
});
type DevicectlDevice = z.infer<typeof DevicectlDevice>;

export const DevicectlDeviceList = z.object({
  result: z.object({ devices: z.array(DevicectlDevice).max(512) }),
});

export const DevicectlLockState = z.object({
  result: z.object({ passcodeRequired: z.boolean(), unlockedSinceBoot: z.boolean().optional() }),
});

export const DevicectlApps = z.object({
  result: z.object({
    apps: z
      .array(
        z.object({
          bundleIdentifier: z.string().min(1).max(256),
          removable: z.boolean().optional(),
        }),
      )
      .max(2000),
  }),
});

function classOf(device: DevicectlDevice): DeviceClass | undefined {
  switch (device.hardwareProperties.deviceType) {
    case 'iPhone':
      return 'phone';
    case 'iPad':
      return 'tablet';
    default:
      return undefined; // watches, TVs, Vision Pro, Macs: not served
  }
}

function isServedDevice(device: DevicectlDevice): boolean {
  const hardware = device.hardwareProperties;
  return (
    hardware.platform === 'iOS' &&
    (hardware.reality === undefined || hardware.reality === 'physical') &&
    classOf(device) !== undefined
  );
}

/** The physical iPhones and iPads in a devicectl listing (paired or not, connected or not). */
export function parseDevicectlDevices(json: string): DriverDevice[] {
  const list = DevicectlDeviceList.parse(JSON.parse(json));
  return list.result.devices.filter(isServedDevice).map((device) => {
    const hardware = device.hardwareProperties;
    const model = hardware.marketingName ?? hardware.productType ?? 'iPhone';
    return {
      id: hardware.udid,
      name: device.deviceProperties.name ?? model,
      model,
      platform: 'ios',
      os: device.deviceProperties.osVersionNumber ?? '',
      physical: true,
      class: classOf(device) ?? 'phone',
      power: device.connectionProperties.tunnelState === 'connected' ? 'booted' : 'unavailable',
    };
  });
}

/**
 * Presence from the listing alone: not listed → not-present; not paired → untrusted (the phone
 * has not trusted this Mac); tunnel anything but connected → not-present. `undefined` means
 * connected and paired: whether it is locked needs one more read (lockState).
 */
export function presenceFromListing(json: string, udid: string): Presence | undefined {
  const list = DevicectlDeviceList.parse(JSON.parse(json));
  const device = list.result.devices.find((entry) => entry.hardwareProperties.udid === udid);
  if (device === undefined) return { present: false, reason: 'not-present' };
  if (device.connectionProperties.pairingState !== 'paired') {
    return { present: false, reason: 'untrusted' };
  }
  if (device.connectionProperties.tunnelState !== 'connected') {
    return { present: false, reason: 'not-present' };
  }
  return undefined;
}

/** `passcodeRequired: true` in lockState means the screen is locked now. */
export function isLocked(lockStateJson: string): boolean {
  return DevicectlLockState.parse(JSON.parse(lockStateJson)).result.passcodeRequired;
}

export function parseInstalledApps(json: string): string[] {
  return DevicectlApps.parse(JSON.parse(json))
    .result.apps.filter((app) => app.removable !== false)
    .map((app) => app.bundleIdentifier)
    .sort();
}

// --- exec -------------------------------------------------------------------------------------

/**
 * The devicectl commands a lease holder may run. The agent adds `--device <udid>` right after the
 * command words, so `device info apps` runs as `xcrun devicectl device info apps --device <udid>`.
 * Commands that list or pair other devices (`list`, `manage`) are not on it.
 */
export const DEVICECTL_DEVICE_COMMANDS: readonly (readonly string[])[] = [
  ['device', 'info', 'apps'],
  ['device', 'info', 'details'],
  ['device', 'info', 'displays'],
  ['device', 'info', 'files'],
  ['device', 'info', 'lockState'],
  ['device', 'info', 'processes'],
  ['device', 'install', 'app'],
  ['device', 'uninstall', 'app'],
  ['device', 'process', 'launch'],
  ['device', 'process', 'signal'],
  ['device', 'process', 'terminate'],
  ['device', 'process', 'resume'],
  ['device', 'process', 'suspend'],
  ['device', 'process', 'sendMemoryWarning'],
  ['device', 'copy', 'from'],
  ['device', 'copy', 'to'],
  ['device', 'notification', 'observe'],
  ['device', 'notification', 'post'],
  ['device', 'reboot'],
  ['device', 'sysdiagnose'],
];

function namesADevice(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false; // what follows goes to the app, not to devicectl
    if (arg === '--device' || arg === '-d' || arg.startsWith('--device=')) return true;
  }
  return false;
}

export function devicectlExecArgv(args: readonly string[], device: DriverDevice): ExecPlan {
  const refusal = checkToolFits('devicectl', device) ?? checkExecArgs(args);
  if (refusal) return refusal;
  const command = DEVICECTL_DEVICE_COMMANDS.filter((words) =>
    words.every((word, index) => args[index] === word),
  ).sort((a, b) => b.length - a.length)[0];
  if (command === undefined) {
    return refuseTool(
      `devicectl ${args.slice(0, 3).join(' ')} is not allowed on a lease; allowed: ${DEVICECTL_DEVICE_COMMANDS.map((words) => words.join(' ')).join(', ')}`,
    );
  }
  const rest = args.slice(command.length);
  if (namesADevice(rest)) {
    return refuseTool('the agent aims devicectl at the leased device; do not pass --device');
  }
  return { ok: true, argv: ['xcrun', 'devicectl', ...command, '--device', device.id, ...rest] };
}

// --- the driver -------------------------------------------------------------------------------

export interface DevicectlDriverOptions {
  run?: CommandRunner;
}

export class DevicectlDriver implements Driver {
  readonly kind = 'devicectl';
  readonly platforms = ['ios'] as const;
  readonly #run: CommandRunner;

  constructor(options: DevicectlDriverOptions = {}) {
    this.#run = options.run ?? createCommandRunner();
  }

  async listDevices(): Promise<DeviceListing> {
    const json = await this.#readJson(['list', 'devices']);
    // Physical devices are matched by the devices list, never the catalog (DESIGN.md §3.3).
    return {
      catalog: { platforms: ['ios'], models: [], runtimes: [] },
      devices: this.#parse('list devices', () => parseDevicectlDevices(json)),
    };
  }

  boot(device: DriverDevice): Promise<never> {
    return Promise.reject(
      new DriverError(`devicectl does not boot physical devices (${device.id})`),
    );
  }

  shutdown(device: DriverDevice): Promise<never> {
    return Promise.reject(new DriverError(`devicectl does not shut down ${device.id}`));
  }

  erase(device: DriverDevice): Promise<never> {
    return Promise.reject(new DriverError(`devicectl does not erase ${device.id}; use reset`));
  }

  async readPresence(device: DriverDevice): Promise<Presence> {
    const listing = await this.#readJson(['list', 'devices']);
    const fromListing = this.#parse('list devices', () => presenceFromListing(listing, device.id));
    if (fromListing !== undefined) return fromListing;
    const lockState = await this.#readJson(['device', 'info', 'lockState', '--device', device.id]);
    return this.#parse('lockState', () => isLocked(lockState))
      ? { present: false, reason: 'locked' }
      : { present: true };
  }

  async readResetBaseline(device: DriverDevice): Promise<ResetBaseline> {
    return { apps: await this.#installedApps(device) };
  }

  async reset(device: DriverDevice, baseline: ResetBaseline | undefined): Promise<void> {
    // Without a baseline we cannot tell the holder's apps from the owner's: remove nothing.
    if (baseline === undefined) return;
    const keep = new Set(baseline.apps);
    for (const app of await this.#installedApps(device)) {
      if (keep.has(app)) continue;
      await runChecked(this.#run, [
        'xcrun',
        'devicectl',
        'device',
        'uninstall',
        'app',
        '--device',
        device.id,
        app,
      ]);
    }
  }

  async checkHealth(): Promise<void> {
    await this.#readJson(['list', 'devices']);
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    return checkToolFits(tool, device) ?? devicectlExecArgv(args, device);
  }

  async #installedApps(device: DriverDevice): Promise<string[]> {
    const json = await this.#readJson(['device', 'info', 'apps', '--device', device.id]);
    return this.#parse('info apps', () => parseInstalledApps(json));
  }

  /** Runs `xcrun devicectl <words> --json-output <temp file>` and returns the file's text. */
  async #readJson(words: string[]): Promise<string> {
    const directory = await mkdtemp(join(tmpdir(), 'simlock-devicectl-'));
    const file = join(directory, 'output.json');
    try {
      await runChecked(this.#run, ['xcrun', 'devicectl', ...words, '--json-output', file], {
        timeoutMs: 60_000,
      });
      return await readFile(file, 'utf8');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }

  #parse<T>(what: string, parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      throw new DriverError(`devicectl ${what}: unreadable output`, { cause: error });
    }
  }
}
