// The one interface every device driver implements (DESIGN.md §5). A driver knows its tools
// (simctl, devicectl, adb, emulator): it runs them as argv, never through a shell, and always aims
// them at one device by its id. Everything above the drivers reads only these shapes.
import type { DoctorFinding, DoctorInspection, DoctorRepair } from './doctor-finding.js';
import {
  EXEC_TOOLS,
  ExecTool,
  MAX_EXEC_ARG_LENGTH,
  MAX_EXEC_ARGS,
  type Catalog,
  type DeviceClass,
  type ErrorCode,
  type Platform,
  type Presence,
} from '../../api/index.js';

/** A tool name as sent by a caller; the exec contract (api) lists the tools. */
export function isExecTool(name: string): name is ExecTool {
  return ExecTool.safeParse(name).success;
}

/**
 * What the tool says about a device's power, before the agent adds its own states (leased, …).
 * `transitioning` is a device on its way up or down that the agent did not start (it counts as
 * running and cannot be granted). A physical device the host can see is `booted`.
 */
export type PowerState = 'shutdown' | 'booted' | 'transitioning' | 'unavailable';

export interface DriverDevice {
  /** The id every tool is aimed at: a simulator's UDID, a phone's UDID, an Android serial, an AVD. */
  id: string;
  name: string;
  model: string;
  platform: Platform;
  /** OS version ("18.4"), or the API level on Android ("34"). */
  os: string;
  physical: boolean;
  class: DeviceClass;
  power: PowerState;
  /** Made by the agent in its own place: it may delete it (never an adopted or physical one). */
  deletable?: boolean;
}

/**
 * A model the driver can make a new virtual device of (a simctl device type, an AVD device
 * profile), and the OS versions it can make it with (installed runtimes, installed system images:
 * API levels on Android). What the host's config narrows the offer to is applied by the driver.
 */
export interface MakeableModel {
  platform: Platform;
  model: string;
  class: DeviceClass;
  os: string[];
}

/** What the agent asks a driver to make: one model with one OS it listed as makeable. */
export interface DeviceToMake {
  platform: Platform;
  model: string;
  os: string;
}

/**
 * One read of a driver: what it could boot (catalog), the devices it sees now and what it could
 * make. A driver lists only the devices the agent may touch: the virtual devices of the agent's own
 * place (its simctl device set, its AVD home) and those adopted by config, and physical devices.
 */
export interface DeviceListing {
  /**
   * Platforms, and the models and runtimes of virtual devices (those it has and those it can make);
   * physical devices are in `devices`.
   */
  catalog: Catalog;
  devices: DriverDevice[];
  /** What `create` can make; absent or empty when the driver makes no devices. */
  makeable?: MakeableModel[];
  /** Why the driver can make nothing although it would (no SDK found, a tool failing), if so. */
  provisionProblem?: string;
}

/** What the driver needs to put a physical device back as it was: the apps present at grant. */
export interface ResetBaseline {
  apps: string[];
}

export type ExecRefusalCode = Extract<
  ErrorCode,
  'TOOL_NOT_ALLOWED' | 'UNAVAILABLE' | 'LEASE_NOT_ACTIVE'
>;

/** The argv to run, or why not. The exec server runs `argv` without a shell. */
export type ExecPlan =
  { ok: true; argv: [string, ...string[]] } | { ok: false; code: ExecRefusalCode; message: string };

export interface Driver {
  /** "simctl", "devicectl", "adb", "fake", or "combined". */
  readonly kind: string;
  /** Platforms this driver serves even when it sees no device (NO_DRIVER for the others). */
  readonly platforms: readonly Platform[];

  listDevices(): Promise<DeviceListing>;

  /** Boots a virtual device and resolves once it is usable. */
  boot(device: DriverDevice): Promise<void>;
  /** Shuts a virtual device down; resolves when it is down (already down is fine). */
  shutdown(device: DriverDevice): Promise<void>;
  /** Returns a virtual device to factory content; leaves it shut down. */
  erase(device: DriverDevice): Promise<void>;

  /**
   * Makes a new virtual device in the agent's own place, named `name`, shut down; resolves with it
   * as the next listing will show it. Only drivers that list `makeable` have it.
   */
  create?(want: DeviceToMake, name: string): Promise<DriverDevice>;
  /** Deletes a virtual device the agent made (never one outside its own place). */
  delete?(device: DriverDevice): Promise<void>;

  /** Reads what `reset` needs to undo a lease on a physical device (taken at grant). */
  readResetBaseline(device: DriverDevice): Promise<ResetBaseline>;
  /** Puts a physical device back as it was at grant: removes the apps installed since. */
  reset(device: DriverDevice, baseline: ResetBaseline | undefined): Promise<void>;

  /** Reads a physical device's presence now. May throw when the tool cannot answer. */
  readPresence(device: DriverDevice): Promise<Presence>;

  /** Resolves when the driver's tools work; rejects with the reason when they do not. */
  checkHealth(): Promise<void>;

  /**
   * A cheap check that a booted virtual device answers (run on the probe interval while it is
   * leased, and by a quarantine retry after its boot): resolves when it does, rejects with a
   * DriverError saying what failed. Drivers without one rely on the listing alone.
   */
  checkDevice?(device: DriverDevice): Promise<void>;

  /**
   * `simlock-agent doctor`: compares the driver's own place with what its tools list, and says
   * what is wrong there (leftovers, half-made devices, stale files), never naming or touching
   * anything outside it. Drivers without a place of their own have none.
   */
  inspect?(): Promise<DoctorInspection>;
  /** `doctor --fix`: repairs those of `findings` that are still there on a second look. */
  repair?(findings: readonly DoctorFinding[]): Promise<DoctorRepair[]>;

  /** The argv that runs `tool` with `args` aimed at `device`, or a refusal. Runs nothing. */
  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan;
}

/** A driver operation that failed; the message names the tool and device. */
export class DriverError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DriverError';
  }
}

export function refuseTool(message: string): ExecPlan {
  return { ok: false, code: 'TOOL_NOT_ALLOWED', message };
}

/**
 * The tool-fit rule, the same for every driver: simctl only on an iOS simulator, devicectl only on
 * a physical iOS device, adb only on an Android device (emulator or phone).
 */
export function checkToolFits(
  tool: string,
  device: Pick<DriverDevice, 'id' | 'platform' | 'physical'>,
): ExecPlan | undefined {
  if (!isExecTool(tool)) {
    return refuseTool(`unknown tool "${tool}"; the tools are ${EXEC_TOOLS.join(', ')}`);
  }
  const kind = device.physical ? 'physical' : 'virtual';
  const fits =
    (tool === 'simctl' && device.platform === 'ios' && !device.physical) ||
    (tool === 'devicectl' && device.platform === 'ios' && device.physical) ||
    (tool === 'adb' && device.platform === 'android');
  if (fits) return undefined;
  return refuseTool(
    `${tool} does not fit the leased device ${device.id} (${device.platform} ${kind})`,
  );
}

/** Exec arguments arrive from the network: the contract's bounds, checked again before a run. */
export function checkExecArgs(args: readonly string[]): ExecPlan | undefined {
  if (args.length > MAX_EXEC_ARGS) return refuseTool(`at most ${MAX_EXEC_ARGS} arguments`);
  for (const arg of args) {
    if (arg.length > MAX_EXEC_ARG_LENGTH) {
      return refuseTool(`an argument is longer than ${MAX_EXEC_ARG_LENGTH} characters`);
    }
    if (arg.includes('\0')) return refuseTool('an argument contains a NUL character');
  }
  return undefined;
}

/** The class a model name implies when the tool gives no better hint. */
export function classFromModelName(model: string): DeviceClass {
  return /\b(ipad|tablet)\b/i.test(model) ? 'tablet' : 'phone';
}
