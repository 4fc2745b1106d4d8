// Android through `adb` (emulators and phones) and `emulator` (booting AVDs), on Linux or macOS.
// Ids: a phone is its adb serial; an emulator is its AVD name, stable across boots, and the driver
// keeps which serial (emulator-5554…) each running AVD has, to aim adb at it.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { Catalog, DeviceClass, Presence } from '../../../api/index.js';
import { systemClock, type Clock } from '../../../runtime/index.js';
import { sleep } from '../../clock.js';
import {
  checkToolFits,
  DriverError,
  type DeviceListing,
  type Driver,
  type DriverDevice,
  type ExecPlan,
  type ResetBaseline,
} from '../driver.js';
import {
  createCommandRunner,
  createDetachedSpawner,
  runChecked,
  type CommandRunner,
  type DetachedSpawner,
} from '../command.js';
import {
  adbExecArgv,
  describeAvd,
  isEmulatorSerial,
  parseAdbDevices,
  parseAvdList,
  parseIni,
  presenceFromAdbState,
  type AdbEntry,
  type AvdDescription,
} from './adb-output.js';

// --- the driver -------------------------------------------------------------------------------

export interface AdbDriverOptions {
  run?: CommandRunner;
  spawnDetached?: DetachedSpawner;
  clock?: Clock;
  /** Where AVDs live; default $ANDROID_AVD_HOME, $ANDROID_USER_HOME/avd, or ~/.android/avd. */
  avdHome?: string;
  /** Serve AVDs through `emulator` (default true); false serves phones only. */
  emulators?: boolean;
  bootTimeoutMs?: number;
  shutdownTimeoutMs?: number;
  pollIntervalMs?: number;
}

interface PhoneProperties {
  model: string;
  apiLevel: string;
  class: DeviceClass;
}

const FIRST_EMULATOR_PORT = 5554;
const LAST_EMULATOR_PORT = 5682;

export class AdbDriver implements Driver {
  readonly kind = 'adb';
  readonly platforms = ['android'] as const;
  readonly #run: CommandRunner;
  readonly #spawnDetached: DetachedSpawner;
  readonly #clock: Clock;
  readonly #avdHome: string;
  readonly #emulators: boolean;
  readonly #bootTimeoutMs: number;
  readonly #shutdownTimeoutMs: number;
  readonly #pollIntervalMs: number;

  /** Running AVD → its serial. */
  readonly #serialByAvd = new Map<string, string>();
  /** Serial → AVD, for serials already asked (`emu avd name`). */
  readonly #avdBySerial = new Map<string, string>();
  /** Phones' properties by serial: kept while unplugged, so an unauthorized phone stays known. */
  readonly #phones = new Map<string, PhoneProperties>();
  readonly #avds = new Map<string, AvdDescription>();
  /** AVDs erased: wiped (-wipe-data) at their next boot. */
  readonly #wipeAtNextBoot = new Set<string>();
  /** Ports taken by boots in flight, not yet in `adb devices`. */
  readonly #portsBooting = new Set<number>();

  constructor(options: AdbDriverOptions = {}) {
    this.#run = options.run ?? createCommandRunner();
    this.#spawnDetached = options.spawnDetached ?? createDetachedSpawner();
    this.#clock = options.clock ?? systemClock();
    this.#avdHome = options.avdHome ?? defaultAvdHome();
    this.#emulators = options.emulators ?? true;
    this.#bootTimeoutMs = options.bootTimeoutMs ?? 300_000;
    this.#shutdownTimeoutMs = options.shutdownTimeoutMs ?? 60_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  async listDevices(): Promise<DeviceListing> {
    const entries = await this.#adbDevices();
    const devices: DriverDevice[] = [];

    const avds = this.#emulators ? await this.#readAvds() : [];
    const running = await this.#runningAvds(entries);
    for (const avd of avds) {
      const entry = running.get(avd.name);
      devices.push({
        id: avd.name,
        name: avd.displayName,
        model: avd.model,
        platform: 'android',
        os: avd.apiLevel,
        physical: false,
        class: avd.class,
        power:
          entry === undefined
            ? 'shutdown'
            : entry.state === 'device' && (await this.#bootCompleted(entry.serial))
              ? 'booted'
              : 'transitioning',
      });
    }

    for (const entry of entries) {
      if (isEmulatorSerial(entry.serial)) continue;
      if (entry.state === 'device' && !this.#phones.has(entry.serial)) {
        this.#phones.set(entry.serial, await this.#readPhoneProperties(entry.serial));
      }
      // A phone never authorized on this host cannot be identified; it shows up once trusted.
      const properties = this.#phones.get(entry.serial);
      if (properties === undefined) continue;
      devices.push({
        id: entry.serial,
        name: `${properties.model} ${entry.serial}`,
        model: properties.model,
        platform: 'android',
        os: properties.apiLevel,
        physical: true,
        class: properties.class,
        power: entry.state === 'device' ? 'booted' : 'unavailable',
      });
    }

    const models = new Map<string, Catalog['models'][number]>();
    const runtimes = new Set<string>();
    for (const avd of avds) {
      models.set(avd.model, { name: avd.model, platform: 'android', class: avd.class });
      runtimes.add(avd.apiLevel);
    }
    return {
      catalog: {
        platforms: ['android'],
        models: [...models.values()].slice(0, 256),
        runtimes: [...runtimes].map((version) => ({ platform: 'android' as const, version })),
      },
      devices,
    };
  }

  async boot(device: DriverDevice): Promise<void> {
    const avd = this.#requireEmulator(device, 'boot');
    if (this.#serialByAvd.has(avd)) return;
    const port = await this.#freePort();
    const serial = `emulator-${port}`;
    const wipe = this.#wipeAtNextBoot.has(avd);
    this.#portsBooting.add(port);
    try {
      await this.#spawnDetached([
        'emulator',
        '-avd',
        avd,
        '-port',
        String(port),
        '-no-window',
        '-no-audio',
        '-no-boot-anim',
        ...(wipe ? ['-wipe-data'] : []),
      ]);
      await this.#waitFor(
        () => this.#bootCompleted(serial),
        this.#bootTimeoutMs,
        `${avd} did not finish booting on ${serial}`,
      );
      this.#serialByAvd.set(avd, serial);
      this.#avdBySerial.set(serial, avd);
      this.#wipeAtNextBoot.delete(avd);
    } catch (error) {
      // Do not leave a half-booted emulator holding RAM.
      await this.#run(['adb', '-s', serial, 'emu', 'kill']).catch(() => undefined);
      throw error;
    } finally {
      this.#portsBooting.delete(port);
    }
  }

  async shutdown(device: DriverDevice): Promise<void> {
    const avd = this.#requireEmulator(device, 'shut down');
    const serial = this.#serialByAvd.get(avd);
    if (serial === undefined) return;
    await runChecked(this.#run, ['adb', '-s', serial, 'emu', 'kill']);
    await this.#waitFor(
      async () => !(await this.#adbDevices()).some((entry) => entry.serial === serial),
      this.#shutdownTimeoutMs,
      `${avd} (${serial}) did not shut down`,
    );
    this.#serialByAvd.delete(avd);
    this.#avdBySerial.delete(serial);
  }

  /** Shuts the AVD down and wipes its data at its next boot: the emulator wipes only at boot. */
  async erase(device: DriverDevice): Promise<void> {
    await this.shutdown(device);
    this.#wipeAtNextBoot.add(device.id);
  }

  async readPresence(device: DriverDevice): Promise<Presence> {
    this.#requirePhone(device, 'read presence of');
    const entry = (await this.#adbDevices()).find((candidate) => candidate.serial === device.id);
    return presenceFromAdbState(entry?.state);
  }

  async readResetBaseline(device: DriverDevice): Promise<ResetBaseline> {
    this.#requirePhone(device, 'reset');
    return { apps: await this.#thirdPartyPackages(device.id) };
  }

  async reset(device: DriverDevice, baseline: ResetBaseline | undefined): Promise<void> {
    this.#requirePhone(device, 'reset');
    if (baseline === undefined) return; // cannot tell the holder's apps from the owner's
    const keep = new Set(baseline.apps);
    for (const app of await this.#thirdPartyPackages(device.id)) {
      if (!keep.has(app)) await runChecked(this.#run, ['adb', '-s', device.id, 'uninstall', app]);
    }
  }

  async checkHealth(): Promise<void> {
    await runChecked(this.#run, ['adb', 'version'], { timeoutMs: 30_000 });
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    const refusal = checkToolFits(tool, device);
    if (refusal) return refusal;
    const serial = device.physical ? device.id : this.#serialByAvd.get(device.id);
    if (serial === undefined) {
      return { ok: false, code: 'UNAVAILABLE', message: `emulator ${device.id} is not running` };
    }
    return adbExecArgv(args, serial);
  }

  // --- internals ---

  async #adbDevices(): Promise<AdbEntry[]> {
    const result = await runChecked(this.#run, ['adb', 'devices', '-l']);
    try {
      return parseAdbDevices(result.stdout);
    } catch (error) {
      throw new DriverError('adb devices: unreadable output', { cause: error });
    }
  }

  async #readAvds(): Promise<AvdDescription[]> {
    const result = await runChecked(this.#run, ['emulator', '-list-avds']);
    const descriptions: AvdDescription[] = [];
    for (const name of parseAvdList(result.stdout)) {
      let description = this.#avds.get(name);
      if (description === undefined) {
        const config = await this.#readAvdConfig(name);
        description = config === undefined ? undefined : describeAvd(name, config);
        if (description !== undefined) this.#avds.set(name, description);
      }
      if (description !== undefined) descriptions.push(description);
    }
    return descriptions;
  }

  async #readAvdConfig(name: string): Promise<string | undefined> {
    const beside = join(this.#avdHome, `${name}.avd`, 'config.ini');
    const text = await readFile(beside, 'utf8').catch(() => undefined);
    if (text !== undefined) return text;
    // Some AVDs live elsewhere; their <name>.ini says where.
    const pointer = await readFile(join(this.#avdHome, `${name}.ini`), 'utf8').catch(() => '');
    const path = parseIni(pointer).get('path');
    if (path === undefined || !isAbsolute(path)) return undefined;
    return readFile(join(path, 'config.ini'), 'utf8').catch(() => undefined);
  }

  /** Which AVD each emulator serial runs (asked once per serial), and its adb entry. */
  async #runningAvds(entries: AdbEntry[]): Promise<Map<string, AdbEntry>> {
    const running = new Map<string, AdbEntry>();
    const serials = new Set(entries.map((entry) => entry.serial));
    for (const [serial, avd] of this.#avdBySerial) {
      if (!serials.has(serial)) {
        this.#avdBySerial.delete(serial);
        if (this.#serialByAvd.get(avd) === serial) this.#serialByAvd.delete(avd);
      }
    }
    for (const entry of entries) {
      if (!isEmulatorSerial(entry.serial)) continue;
      let avd = this.#avdBySerial.get(entry.serial);
      if (avd === undefined) {
        const answer = await this.#run(['adb', '-s', entry.serial, 'emu', 'avd', 'name']);
        const name = answer.exitCode === 0 ? parseAvdList(answer.stdout)[0] : undefined;
        if (name === undefined || name === 'OK') continue;
        avd = name;
        this.#avdBySerial.set(entry.serial, avd);
      }
      this.#serialByAvd.set(avd, entry.serial);
      running.set(avd, entry);
    }
    return running;
  }

  async #bootCompleted(serial: string): Promise<boolean> {
    const result = await this.#run(['adb', '-s', serial, 'shell', 'getprop', 'sys.boot_completed']);
    return result.exitCode === 0 && result.stdout.trim() === '1';
  }

  async #readPhoneProperties(serial: string): Promise<PhoneProperties> {
    const property = async (name: string): Promise<string> =>
      (await runChecked(this.#run, ['adb', '-s', serial, 'shell', 'getprop', name])).stdout
        .trim()
        .slice(0, 128);
    const apiLevel = await property('ro.build.version.sdk');
    if (!/^\d{1,3}$/.test(apiLevel)) {
      throw new DriverError(`adb: ${serial} has an unreadable API level "${apiLevel}"`);
    }
    const model = (await property('ro.product.model')) || serial;
    const characteristics = await property('ro.build.characteristics');
    return {
      apiLevel,
      model,
      class: characteristics.split(',').includes('tablet') ? 'tablet' : 'phone',
    };
  }

  async #thirdPartyPackages(serial: string): Promise<string[]> {
    const result = await runChecked(this.#run, [
      'adb',
      '-s',
      serial,
      'shell',
      'pm',
      'list',
      'packages',
      '-3',
    ]);
    return result.stdout
      .split(/\r?\n/)
      .map((line) => /^package:([A-Za-z0-9._]{1,256})$/.exec(line.trim())?.[1])
      .filter((name): name is string => name !== undefined)
      .slice(0, 5000)
      .sort();
  }

  async #freePort(): Promise<number> {
    const taken = new Set<number>(this.#portsBooting);
    for (const entry of await this.#adbDevices()) {
      const port = /^emulator-(\d+)$/.exec(entry.serial)?.[1];
      if (port !== undefined) taken.add(Number(port));
    }
    for (let port = FIRST_EMULATOR_PORT; port <= LAST_EMULATOR_PORT; port += 2) {
      if (!taken.has(port)) return port;
    }
    throw new DriverError('no free emulator port between 5554 and 5682');
  }

  async #waitFor(check: () => Promise<boolean>, timeoutMs: number, failure: string): Promise<void> {
    const deadline = this.#clock.now() + timeoutMs;
    for (;;) {
      if (await check()) return;
      if (this.#clock.now() >= deadline) throw new DriverError(`${failure} within ${timeoutMs} ms`);
      await sleep(this.#clock, this.#pollIntervalMs);
    }
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

function defaultAvdHome(): string {
  const env = process.env;
  if (env.ANDROID_AVD_HOME) return env.ANDROID_AVD_HOME;
  if (env.ANDROID_USER_HOME) return join(env.ANDROID_USER_HOME, 'avd');
  return join(homedir(), '.android', 'avd');
}
