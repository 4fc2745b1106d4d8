// iOS simulators through `xcrun simctl` (macOS), in a place the agent owns (ADR 0019): its own
// device set (`--set <dataDir>/simctl-set` before every subcommand), or, for hosts whose CI runs
// plain xcodebuild, the user's default set with a record of the UDIDs the agent created there.
// Simulators adopted by config are reached in the default set. Nothing else is listed or touched,
// and no set-wide command (shutdown all, erase all, delete unavailable) is ever run.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  checkToolFits,
  DriverError,
  type DeviceListing,
  type DeviceToMake,
  type Driver,
  type DriverDevice,
  type ExecPlan,
} from '../driver.js';
import { createCommandRunner, runChecked, type CommandRunner } from '../command.js';
import { CreatedRecord } from './created-record.js';
import type { DoctorFinding, DoctorInspection, DoctorRepair } from '../doctor-finding.js';
import { SimctlDoctor } from './simctl-doctor.js';
import { simctl, simctlExecArgv } from './simctl-exec.js';
import {
  catalogOf,
  findMakeable,
  makeableEntries,
  makeableModels,
  PROVISION_EVERYTHING,
  readSimctlList,
  simulatorsOf,
  type MakeableEntry,
  type ProvisionPolicy,
  type SimctlList,
} from './simctl-list.js';

export { parseSimctlList, type ProvisionPolicy } from './simctl-list.js';
export { SIMCTL_DEVICE_SUBCOMMANDS, simctlExecArgv } from './simctl-exec.js';

/** The agent's own device set, under its data directory. */
export const OWN_SET_FOLDER = 'simctl-set';

// --- the driver -------------------------------------------------------------------------------

export type SimctlDeviceSet = 'own' | 'default-recorded';

export interface SimctlDriverOptions {
  /** The agent's data directory: its device set and its record of created simulators live here. */
  dataDir: string;
  run?: CommandRunner;
  /** How long a boot may take, up to the end of `bootstatus`. */
  bootTimeoutMs?: number;
  /** Where the agent's simulators live (config simctl.deviceSet); default 'own'. */
  deviceSet?: SimctlDeviceSet;
  /** UDIDs of the default set the agent may also serve (config simctl.adopt); never deleted. */
  adopt?: readonly string[];
  /** What the driver offers to make (config provision); default: everything the host can. */
  provision?: ProvisionPolicy;
}

const UDID = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/i;
const CREATE_TIMEOUT_MS = 120_000;
/** A booted simulator answers getenv in well under a second; one that hangs is not answering. */
const CHECK_TIMEOUT_MS = 15_000;

export class SimctlDriver implements Driver {
  readonly kind = 'simctl';
  readonly platforms = ['ios'] as const;
  readonly #run: CommandRunner;
  readonly #bootTimeoutMs: number;
  readonly #mode: SimctlDeviceSet;
  /** The own set's folder (absolute); in 'default-recorded' mode no call names it. */
  readonly #setDir: string;
  readonly #adopted: ReadonlySet<string>;
  readonly #provision: ProvisionPolicy;
  readonly #record: CreatedRecord;
  /** The record as last read, for execArgv (which cannot wait for the file). */
  #recordedNow = new Set<string>();
  /** What the last listing said the host can make, with the identifiers create needs. */
  #makeable: MakeableEntry[] = [];

  constructor(options: SimctlDriverOptions) {
    this.#run = options.run ?? createCommandRunner();
    this.#bootTimeoutMs = options.bootTimeoutMs ?? 180_000;
    this.#mode = options.deviceSet ?? 'own';
    const dataDir = resolve(options.dataDir);
    this.#setDir = join(dataDir, OWN_SET_FOLDER);
    this.#adopted = new Set((options.adopt ?? []).map((udid) => udid.toUpperCase()));
    this.#provision = options.provision ?? PROVISION_EVERYTHING;
    this.#record = new CreatedRecord(dataDir);
  }

  /** The device set the agent's own simulators live in; undefined when they live in the default. */
  get deviceSetPath(): string | undefined {
    return this.#mode === 'own' ? this.#setDir : undefined;
  }

  async listDevices(): Promise<DeviceListing> {
    const own = this.deviceSetPath;
    if (own !== undefined) await this.#makeSetFolder();
    const host = await this.#list(own, ['devices', 'runtimes', 'devicetypes']);
    let devices: DriverDevice[];
    if (own !== undefined) {
      devices = simulatorsOf(host, host.devices);
      if (this.#adopted.size > 0) {
        const mine = new Set(devices.map((device) => device.id.toUpperCase()));
        const defaults = await this.#list(undefined, ['devices']);
        devices.push(
          ...simulatorsOf(
            host,
            defaults.devices,
            (udid) => this.#isAdopted(udid) && !mine.has(udid.toUpperCase()),
          ),
        );
      }
    } else {
      const recorded = await this.#readRecord();
      devices = simulatorsOf(
        host,
        host.devices,
        (udid) => recorded.has(udid.toUpperCase()) || this.#isAdopted(udid),
      );
    }
    // What the agent made is its to delete; an adopted simulator never is.
    devices = devices.map((device) => ({ ...device, deletable: !this.#isAdopted(device.id) }));
    this.#makeable = makeableEntries(host, this.#provision);
    const makeable = makeableModels(this.#makeable);
    return { catalog: catalogOf(host, devices, makeable), devices, makeable };
  }

  async boot(device: DriverDevice): Promise<void> {
    const set = await this.#placeOf(device, 'boot');
    // bootstatus -b boots the simulator if needed and returns once it has finished booting.
    await runChecked(this.#run, [...simctl(set), 'bootstatus', device.id, '-b'], {
      timeoutMs: this.#bootTimeoutMs,
    });
  }

  async shutdown(device: DriverDevice): Promise<void> {
    const set = await this.#placeOf(device, 'shut down');
    const argv = [...simctl(set), 'shutdown', device.id] as const;
    const result = await this.#run(argv);
    // simctl refuses to shut down a simulator that is already down; that is what we wanted.
    if (result.exitCode !== 0 && !/current state: Shutdown/.test(result.stderr)) {
      throw new DriverError(
        `${argv.join(' ')} exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500)}`,
      );
    }
  }

  async erase(device: DriverDevice): Promise<void> {
    // simctl erases only a shut-down simulator.
    await this.shutdown(device);
    const set = await this.#placeOf(device, 'erase');
    await runChecked(this.#run, [...simctl(set), 'erase', device.id]);
  }

  async create(want: DeviceToMake, name: string): Promise<DriverDevice> {
    if (want.platform !== 'ios') {
      throw new DriverError(`simctl makes iOS simulators, not ${want.platform} devices`);
    }
    const entry = findMakeable(this.#makeable, want.model, want.os) ?? (await this.#relist(want));
    const deviceName = this.#mode === 'default-recorded' ? recordedName(name, entry.model) : name;
    checkName(deviceName);
    const set = this.deviceSetPath;
    if (set !== undefined) await this.#makeSetFolder();
    const argv = [
      ...simctl(set),
      'create',
      deviceName,
      entry.deviceTypeIdentifier,
      entry.runtimeIdentifier,
    ] as const;
    const result = await this.#run(argv, { timeoutMs: CREATE_TIMEOUT_MS });
    const making = `${entry.model} (${entry.deviceTypeIdentifier}) with iOS ${entry.os} (${entry.runtimeIdentifier})`;
    if (result.exitCode !== 0) {
      const said = (result.stderr.trim() || result.stdout.trim()).slice(0, 500);
      throw new DriverError(
        `xcrun simctl create could not make ${making}: exited ${result.exitCode}: ${said}`,
      );
    }
    const udid = result.stdout.trim();
    if (!UDID.test(udid)) {
      throw new DriverError(
        `xcrun simctl create made ${making} but printed no UDID: ${JSON.stringify(result.stdout.slice(0, 200))}`,
      );
    }
    if (this.#mode === 'default-recorded') await this.#recordOrUndo(udid, deviceName);
    return {
      id: udid,
      name: deviceName,
      model: entry.model,
      platform: 'ios',
      os: entry.os,
      physical: false,
      class: entry.class,
      power: 'shutdown',
      deletable: true,
    };
  }

  async delete(device: DriverDevice): Promise<void> {
    if (this.#isAdopted(device.id)) {
      throw new DriverError(
        `simctl will not delete ${device.id}: it is adopted (simctl.adopt), not made by the agent`,
      );
    }
    const set = await this.#placeOf(device, 'delete');
    const argv = [...simctl(set), 'delete', device.id] as const;
    const result = await this.#run(argv);
    // A simulator that is already gone from the set is what a delete wants.
    if (result.exitCode !== 0 && !/Invalid device/.test(result.stderr)) {
      throw new DriverError(
        `${argv.join(' ')} exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500)}`,
      );
    }
    if (this.#mode === 'default-recorded') {
      await this.#record.remove(device.id.toUpperCase());
      this.#recordedNow.delete(device.id.toUpperCase());
    }
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

  /** The doctor's look at the own set (or the record): simctl-doctor.ts. */
  inspect(): Promise<DoctorInspection> {
    return this.#doctor().inspect();
  }

  repair(findings: readonly DoctorFinding[]): Promise<DoctorRepair[]> {
    return this.#doctor().repair(findings);
  }

  async checkHealth(): Promise<void> {
    const set = this.deviceSetPath;
    if (set !== undefined) await this.#makeSetFolder();
    await runChecked(this.#run, [...simctl(set), 'list', '-j', 'runtimes'], { timeoutMs: 30_000 });
  }

  /**
   * Asks the booted simulator for its HOME (`simctl getenv <udid> HOME`): CoreSimulator answers it
   * from the running device's launchd_sim, so it fails on a simulator that went down ("Unable to
   * lookup in current state: Shutdown") or whose launchd_sim no longer answers (the timeout).
   */
  async checkDevice(device: DriverDevice): Promise<void> {
    const set = await this.#placeOf(device, 'check');
    const argv = [...simctl(set), 'getenv', device.id, 'HOME'] as const;
    const result = await this.#run(argv, { timeoutMs: CHECK_TIMEOUT_MS });
    if (result.exitCode === 0 && result.stdout.trim().length > 0) return;
    const said = (result.stderr.trim().split('\n').pop() ?? '').slice(0, 300);
    throw new DriverError(
      `simctl getenv ${device.id} HOME exited ${result.exitCode}${said ? `: ${said}` : ' with no HOME'}`,
    );
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    const refusal = checkToolFits(tool, device);
    if (refusal) return refusal;
    if (this.#isAdopted(device.id)) return simctlExecArgv(args, device);
    if (this.#mode === 'own') return simctlExecArgv(args, device, this.#setDir);
    if (this.#recordedNow.has(device.id.toUpperCase())) return simctlExecArgv(args, device);
    return {
      ok: false,
      code: 'UNAVAILABLE',
      message: `${device.id} is not a simulator the agent created or adopted`,
    };
  }

  #doctor(): SimctlDoctor {
    return new SimctlDoctor({
      run: this.#run,
      setDir: this.deviceSetPath,
      record: this.#record,
      adopted: this.#adopted,
    });
  }

  // --- where a device lives -----------------------------------------------------------------

  #isAdopted(udid: string): boolean {
    return this.#adopted.has(udid.toUpperCase());
  }

  /**
   * The set a command on `device` names (undefined: the default set), or a refusal: in the
   * default set the agent touches only the UDIDs it recorded creating and those adopted.
   */
  async #placeOf(device: DriverDevice, action: string): Promise<string | undefined> {
    if (device.physical || device.platform !== 'ios' || !UDID.test(device.id)) {
      throw new DriverError(`simctl cannot ${action} ${device.id}: not an iOS simulator's UDID`);
    }
    if (this.#isAdopted(device.id)) return undefined;
    if (this.#mode === 'own') {
      await this.#makeSetFolder();
      return this.#setDir;
    }
    if ((await this.#readRecord()).has(device.id.toUpperCase())) return undefined;
    throw new DriverError(
      `simctl will not ${action} ${device.id}: the agent did not create it (not in ${this.#record.path}) and it is not adopted`,
    );
  }

  async #readRecord(): Promise<Set<string>> {
    const udids = new Set([...(await this.#record.udids())].map((udid) => udid.toUpperCase()));
    this.#recordedNow = udids;
    return udids;
  }

  async #recordOrUndo(udid: string, name: string): Promise<void> {
    try {
      await this.#record.add({ udid, name, createdAt: new Date().toISOString() });
      this.#recordedNow.add(udid.toUpperCase());
    } catch (error) {
      // An unrecorded simulator in the default set would be a stranger the agent may never touch
      // again: delete it now, while it is known to be the one just made.
      await this.#run([...simctl(undefined), 'delete', udid]).catch(() => undefined);
      throw new DriverError(
        `simctl made ${udid} but could not record it, so deleted it again: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  async #makeSetFolder(): Promise<void> {
    try {
      await mkdir(this.#setDir, { recursive: true });
    } catch (error) {
      throw new DriverError(
        `cannot make the simulator set folder ${this.#setDir}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  async #list(set: string | undefined, kinds: string[]): Promise<SimctlList> {
    const argv = [...simctl(set), 'list', '-j', ...kinds] as const;
    const result = await runChecked(this.#run, argv);
    try {
      return readSimctlList(result.stdout);
    } catch (error) {
      throw new DriverError(`${argv.join(' ')}: unreadable output`, { cause: error });
    }
  }

  /** The makeable entry for `want` after listing again (a runtime installed since), or why not. */
  async #relist(want: DeviceToMake): Promise<MakeableEntry> {
    const listing = await this.listDevices();
    const entry = findMakeable(this.#makeable, want.model, want.os);
    if (entry !== undefined) return entry;
    const why = !this.#provision.enabled
      ? 'provisioning is off (provision.enabled: false)'
      : `it offers ${describeMakeable(listing)}`;
    throw new DriverError(
      `simctl cannot make ${want.model} with iOS ${want.os} on this host: ${why}`,
    );
  }
}

function describeMakeable(listing: DeviceListing): string {
  const models = listing.makeable ?? [];
  if (models.length === 0) return 'nothing';
  const shown = models.slice(0, 8).map((model) => `${model.model} (iOS ${model.os.join(', ')})`);
  return shown.join('; ') + (models.length > shown.length ? '; …' : '');
}

/**
 * In the user's default set the agent's simulators are recognisable: `simlock <model> <short id>`,
 * the short id being the last word of the name asked for ("simlock-iphone-16-3fa2c1" → 3fa2c1).
 */
export function recordedName(name: string, model: string): string {
  if (name.startsWith('simlock ')) return name;
  const shortId =
    name
      .split(/[-\s]+/)
      .filter((word) => word.length > 0)
      .pop() ?? name;
  return `simlock ${model} ${shortId}`;
}

function checkName(name: string): void {
  // eslint-disable-next-line no-control-regex
  if (name.trim().length === 0 || name.length > 128 || /[\u0000-\u001f\u007f]/.test(name)) {
    throw new DriverError(
      `simctl create: ${JSON.stringify(name.slice(0, 140))} is not a simulator name (1–128 printable characters)`,
    );
  }
}
