// Android through `adb` (emulators and phones), `emulator` (booting AVDs) and `avdmanager` (making
// them), on Linux or macOS. The agent's emulators live apart from a person's: its AVDs are in its
// own AVD home (<dataDir>/avd) and run on its own adb server (`adb -P <serverPort>`); phones stay on
// the default adb server. Ids: a phone is its adb serial; an emulator is its AVD name, stable
// across boots; emulator-processes.ts keeps which serial (emulator-5600…) each running AVD has.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Presence } from '../../../api/index.js';
import { systemClock, type Clock } from '../../../runtime/index.js';
import {
  checkToolFits,
  DriverError,
  type DeviceListing,
  type DeviceToMake,
  type Driver,
  type DriverDevice,
  type ExecPlan,
  type MakeableModel,
  type PowerState,
  type ResetBaseline,
} from '../driver.js';
import {
  createCommandRunner,
  createDetachedSpawner,
  runChecked,
  type CommandRunner,
  type DetachedSpawner,
} from '../command.js';
import { adbExecArgv, catalogOf, type AdbEntry } from './adb-output.js';
import { AdbServers, checkServerPort, loopbackPortFree } from './adb-servers.js';
import { AvdHomes, defaultAvdHome, type AvdPlace, type PlacedAvd } from './avd-homes.js';
import { AvdDoctor } from './avd-doctor.js';
import type { DoctorFinding, DoctorInspection, DoctorRepair } from '../doctor-finding.js';
import { AvdMaker, findSdkRoot, type ProvisionSettings } from './avd-maker.js';
import { AdbPhones } from './phones.js';
import { EmulatorProcesses } from './emulator-processes.js';

export interface AdbDriverOptions {
  /** The agent's data directory: its AVDs live in <dataDir>/avd. */
  dataDir: string;
  run?: CommandRunner;
  spawnDetached?: DetachedSpawner;
  clock?: Clock;
  /**
   * The agent's environment (default process.env): where the default AVD home, the default adb
   * server (ANDROID_ADB_SERVER_PORT) and the SDK (ANDROID_HOME) are read.
   */
  env?: NodeJS.ProcessEnv;
  /** The agent's own adb server port, and AVDs of the default home it may also lease. */
  adb?: { serverPort: number; adopt: readonly string[] };
  provision?: ProvisionSettings;
  /** Serve AVDs through `emulator` (default true); false serves phones only. */
  emulators?: boolean;
  /** process.arch of the host (which system images its emulator runs); default the real one. */
  arch?: string;
  /** Whether nothing listens on a loopback port (a console port must be free to boot on it). */
  isPortFree?: (port: number) => Promise<boolean>;
  bootTimeoutMs?: number;
  shutdownTimeoutMs?: number;
  pollIntervalMs?: number;
}

const AVD_NAME = /^[A-Za-z0-9._-]{1,128}$/;

export class AdbDriver implements Driver {
  readonly kind = 'adb';
  readonly platforms = ['android'] as const;
  readonly #run: CommandRunner;
  readonly #servers: AdbServers;
  readonly #homes: AvdHomes;
  readonly #maker: AvdMaker;
  readonly #phones: AdbPhones;
  readonly #sdkRoot: Promise<string | undefined>;
  readonly #wipeDir: string;
  readonly #emulators: boolean;
  /** The emulators running on the agent's server, and which serial each AVD has. */
  readonly #processes: EmulatorProcesses;
  /** Where each AVD the driver listed or made lives: it touches no other. */
  readonly #placeByAvd = new Map<string, AvdPlace>();
  /** AVDs made while a listing ran: that listing may not have seen them yet. */
  readonly #madeDuringListing = new Set<string>();

  constructor(options: AdbDriverOptions) {
    const env = options.env ?? process.env;
    this.#run = options.run ?? createCommandRunner({ env });
    const clock = options.clock ?? systemClock();
    const adb = options.adb ?? { serverPort: 5137, adopt: [] };
    checkServerPort(adb.serverPort, env);
    this.#servers = new AdbServers(this.#run, adb.serverPort);
    const ownHome = join(options.dataDir, 'avd');
    this.#homes = new AvdHomes(this.#run, ownHome, defaultAvdHome(env), adb.adopt);
    this.#emulators = options.emulators ?? true;
    this.#sdkRoot = this.#emulators ? findSdkRoot(env) : Promise.resolve(undefined);
    this.#maker = new AvdMaker({
      run: this.#run,
      clock,
      avdHome: ownHome,
      sdkRoot: this.#sdkRoot,
      arch: options.arch ?? process.arch,
      provision: this.#emulators
        ? (options.provision ?? { enabled: true, models: [], os: [] })
        : { enabled: false, models: [], os: [] },
    });
    this.#phones = new AdbPhones(this.#run, this.#servers);
    this.#wipeDir = join(options.dataDir, 'adb-wipe-at-next-boot');
    this.#processes = new EmulatorProcesses({
      servers: this.#servers,
      spawnDetached: options.spawnDetached ?? createDetachedSpawner(env),
      clock,
      isPortFree: options.isPortFree ?? loopbackPortFree,
      bootTimeoutMs: options.bootTimeoutMs ?? 300_000,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 60_000,
      pollIntervalMs: options.pollIntervalMs ?? 1000,
    });
  }

  /** Why the host offers nothing to make (no SDK found, avdmanager failing), if so. */
  get provisionProblem(): string | undefined {
    return this.#maker.problem;
  }

  async listDevices(): Promise<DeviceListing> {
    const devices: DriverDevice[] = [];
    let avds: PlacedAvd[] = [];
    let makeable: MakeableModel[] = [];
    if (this.#emulators) {
      this.#madeDuringListing.clear();
      makeable = await this.#maker.offer();
      avds = await this.#homes.list(this.#maker.profileNames());
      const listed = new Set(avds.map((avd) => avd.name));
      for (const name of [...this.#placeByAvd.keys()]) {
        if (!listed.has(name) && !this.#madeDuringListing.has(name)) this.#placeByAvd.delete(name);
      }
      const running = await this.#processes.running();
      for (const avd of avds) {
        this.#placeByAvd.set(avd.name, avd.place);
        devices.push({
          id: avd.name,
          name: avd.displayName,
          model: avd.model,
          platform: 'android',
          os: avd.apiLevel,
          physical: false,
          class: avd.class,
          power: await this.#powerOf(avd, running.get(avd.name)),
          deletable: avd.place === 'own',
        });
      }
    }

    devices.push(...(await this.#phones.list()));

    const problem = this.#maker.problem;
    return {
      catalog: catalogOf(avds, makeable),
      devices,
      makeable,
      ...(problem !== undefined ? { provisionProblem: problem } : {}),
    };
  }

  async create(want: DeviceToMake, name: string): Promise<DriverDevice> {
    if (!this.#emulators) throw new DriverError('adb serves phones only here: it makes no AVDs');
    if (!AVD_NAME.test(name)) {
      throw new DriverError(`adb cannot name an AVD "${name}": use a-z A-Z 0-9 . _ - only`);
    }
    if (this.#homes.adopt.has(name) || this.#placeByAvd.has(name)) {
      throw new DriverError(`adb cannot make AVD ${name}: an AVD of that name exists`);
    }
    await this.#homes.makeOwnHome();
    await this.#maker.create(want, name);
    const avd = await this.#homes.describeOwn(name, this.#maker.profileNames());
    if (avd === undefined) {
      throw new DriverError(`avdmanager made ${name} but its config.ini is unreadable`);
    }
    this.#placeByAvd.set(name, 'own');
    this.#madeDuringListing.add(name);
    return {
      id: name,
      name: avd.displayName,
      model: avd.model,
      platform: 'android',
      os: avd.apiLevel,
      physical: false,
      class: avd.class,
      power: 'shutdown',
      deletable: true,
    };
  }

  async delete(device: DriverDevice): Promise<void> {
    const avd = this.#requireEmulator(device, 'delete');
    if (this.#placeOf(avd, 'delete') !== 'own') {
      throw new DriverError(
        `adb never deletes ${avd}: it is adopted from the default AVD home, not made by the agent`,
      );
    }
    await this.shutdown(device);
    await this.#maker.delete(avd);
    this.#homes.forget('own', avd);
    this.#placeByAvd.delete(avd);
    await rm(join(this.#wipeDir, avd), { force: true });
  }

  async boot(device: DriverDevice): Promise<void> {
    const avd = this.#requireEmulator(device, 'boot');
    const place = this.#placeOf(avd, 'boot');
    if (this.#processes.serialOf(avd) !== undefined) return;
    await this.#processes.start(avd, this.#homes.envFor(place), join(this.#wipeDir, avd));
  }

  async shutdown(device: DriverDevice): Promise<void> {
    const avd = this.#requireEmulator(device, 'shut down');
    this.#placeOf(avd, 'shut down');
    await this.#processes.kill(avd);
  }

  /**
   * Shuts the AVD down and wipes its data at its next boot (the emulator wipes only at boot); the
   * mark is a file in the data directory, so a restarted agent still wipes.
   */
  async erase(device: DriverDevice): Promise<void> {
    await this.shutdown(device);
    await mkdir(this.#wipeDir, { recursive: true });
    await writeFile(join(this.#wipeDir, device.id), '');
  }

  async readPresence(device: DriverDevice): Promise<Presence> {
    this.#requirePhone(device, 'read presence of');
    return this.#phones.presence(device.id);
  }

  async readResetBaseline(device: DriverDevice): Promise<ResetBaseline> {
    this.#requirePhone(device, 'reset');
    return this.#phones.baseline(device.id);
  }

  async reset(device: DriverDevice, baseline: ResetBaseline | undefined): Promise<void> {
    this.#requirePhone(device, 'reset');
    if (baseline === undefined) return; // cannot tell the holder's apps from the owner's
    await this.#phones.reset(device.id, baseline);
  }

  async checkHealth(): Promise<void> {
    await runChecked(this.#run, ['adb', 'version'], { timeoutMs: 30_000 });
  }

  /** The doctor's look at the agent's AVD home and adb server (avd-doctor.ts); phones: none. */
  inspect(): Promise<DoctorInspection> {
    return this.#emulators
      ? this.#doctor().inspect()
      : Promise.resolve({ findings: [], tallies: [] });
  }

  repair(findings: readonly DoctorFinding[]): Promise<DoctorRepair[]> {
    return this.#doctor().repair(findings);
  }

  #doctor(): AvdDoctor {
    const { ownHome, adopt } = this.#homes;
    return new AvdDoctor({ servers: this.#servers, ownHome, adopt, wipeDir: this.#wipeDir });
  }

  /** Fails unless the AVD's emulator runs, answers and has booted (emulator-processes.ts). */
  async checkDevice(device: DriverDevice): Promise<void> {
    const avd = this.#requireEmulator(device, 'check');
    this.#placeOf(avd, 'check');
    await this.#processes.check(avd);
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    const refusal = checkToolFits(tool, device);
    if (refusal) return refusal;
    if (device.physical) return adbExecArgv(args, device.id);
    const serial = this.#processes.serialOf(device.id);
    if (serial === undefined) {
      return { ok: false, code: 'UNAVAILABLE', message: `emulator ${device.id} is not running` };
    }
    return adbExecArgv(args, serial, this.#servers.port);
  }

  // --- internals ---

  async #powerOf(avd: PlacedAvd, entry: AdbEntry | undefined): Promise<PowerState> {
    if (entry !== undefined) {
      return entry.state === 'device' && (await this.#processes.bootCompleted(entry.serial))
        ? 'booted'
        : 'transitioning';
    }
    // An adopted AVD an emulator holds outside the agent's server is the person's right now.
    if (avd.place === 'adopted' && (await this.#homes.isLocked(avd))) return 'unavailable';
    return 'shutdown';
  }

  #placeOf(avd: string, action: string): AvdPlace {
    const place = this.#placeByAvd.get(avd);
    if (place === undefined) {
      throw new DriverError(
        `adb cannot ${action} ${avd}: it is neither in the agent's AVD home nor adopted`,
      );
    }
    return place;
  }

  #requireEmulator(device: DriverDevice, action: string): string {
    if (device.physical || device.platform !== 'android') {
      throw new DriverError(`adb cannot ${action} ${device.id}: not an Android emulator`);
    }
    return device.id;
  }

  #requirePhone(device: DriverDevice, action: string): void {
    if (!device.physical || device.platform !== 'android') {
      throw new DriverError(`adb cannot ${action} ${device.id}: not an Android phone`);
    }
  }
}
