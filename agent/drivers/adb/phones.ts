// Phones: listed and read on the default adb server (the one they are on today, which the agent
// never restarts), each one's properties read once per serial with getprop, and put back after a
// lease by uninstalling the apps installed since the grant.
import type { DeviceClass, Presence } from '../../../api/index.js';
import { runChecked, type CommandRunner } from '../command.js';
import { DriverError, type DriverDevice, type ResetBaseline } from '../driver.js';
import { presenceFromAdbState } from './adb-output.js';
import type { AdbServers } from './adb-servers.js';

interface PhoneProperties {
  model: string;
  apiLevel: string;
  class: DeviceClass;
}

export class AdbPhones {
  readonly #run: CommandRunner;
  readonly #servers: AdbServers;
  /** Phones' properties by serial: kept while unplugged, so an unauthorized phone stays known. */
  readonly #properties = new Map<string, PhoneProperties>();

  constructor(run: CommandRunner, servers: AdbServers) {
    this.#run = run;
    this.#servers = servers;
  }

  async list(): Promise<DriverDevice[]> {
    const devices: DriverDevice[] = [];
    for (const entry of await this.#servers.defaultPhones()) {
      if (entry.state === 'device' && !this.#properties.has(entry.serial)) {
        this.#properties.set(entry.serial, await this.#read(entry.serial));
      }
      // A phone never authorized on this host cannot be identified; it shows up once trusted.
      const properties = this.#properties.get(entry.serial);
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
    return devices;
  }

  async presence(serial: string): Promise<Presence> {
    const entry = (await this.#servers.defaultPhones()).find(
      (candidate) => candidate.serial === serial,
    );
    return presenceFromAdbState(entry?.state);
  }

  async baseline(serial: string): Promise<ResetBaseline> {
    return { apps: await this.#thirdPartyPackages(serial) };
  }

  async reset(serial: string, baseline: ResetBaseline): Promise<void> {
    const keep = new Set(baseline.apps);
    for (const app of await this.#thirdPartyPackages(serial)) {
      if (!keep.has(app)) await runChecked(this.#run, ['adb', '-s', serial, 'uninstall', app]);
    }
  }

  async #read(serial: string): Promise<PhoneProperties> {
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
}
