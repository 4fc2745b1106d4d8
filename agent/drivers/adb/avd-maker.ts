// Making and deleting AVDs in the agent's own AVD home with `avdmanager`, and what the host can
// make: its device profiles × the system images installed in the SDK, narrowed by the config.
// Every avdmanager call runs with ANDROID_AVD_HOME=<the agent's AVD home>.
import { access, realpath } from 'node:fs/promises';
import { basename, delimiter, dirname, join } from 'node:path';
import type { Clock } from '../../../runtime/index.js';
import type { CommandRunner } from '../command.js';
import { DriverError, type DeviceToMake, type MakeableModel } from '../driver.js';
import {
  avdmanagerText,
  classifyAvdmanagerFailure,
  classOfProfile,
  imagesByApiLevel,
  parseDeviceProfiles,
  readSystemImages,
  type DeviceProfile,
  type SystemImage,
} from './sdk-output.js';

export interface ProvisionSettings {
  /** Offer and make devices at all. */
  enabled: boolean;
  /** Models offered (display names or profile ids, any case); empty: all phones and tablets. */
  models: string[];
  /** API levels offered; empty: every installed one. */
  os: string[];
}

export interface AvdMakerOptions {
  run: CommandRunner;
  clock: Clock;
  /** The agent's AVD home: ANDROID_AVD_HOME of every avdmanager call. */
  avdHome: string;
  /** The SDK whose system-images/ says what is installed; undefined: none found. */
  sdkRoot: Promise<string | undefined>;
  /** process.arch of the host: which ABIs its emulator runs. */
  arch: string;
  provision: ProvisionSettings;
}

/** Profiles are compiled into avdmanager (and ~/.android/devices.xml): read once an hour. */
const PROFILES_FRESH_MS = 3_600_000;
/** After avdmanager could not list them, try again this much later. */
const PROFILES_RETRY_MS = 60_000;
const AVDMANAGER_TIMEOUT_MS = 180_000;

interface Choice {
  profile: DeviceProfile;
  image: SystemImage;
}

export class AvdMaker {
  readonly #options: AvdMakerOptions;
  #profiles: DeviceProfile[] | undefined;
  #profilesReadAt = Number.NEGATIVE_INFINITY;
  #profilesFailedAt = Number.NEGATIVE_INFINITY;
  #problem: string | undefined;

  constructor(options: AvdMakerOptions) {
    this.#options = options;
  }

  /** Why the host offers nothing to make right now (no SDK, avdmanager failing), if so. */
  get problem(): string | undefined {
    return this.#problem;
  }

  /** Profile id → the name people see ("pixel_7" → "Pixel 7"), once avdmanager listed them. */
  profileNames(): Map<string, string> {
    return new Map((this.#profiles ?? []).map((profile) => [profile.id, profile.name]));
  }

  /** Reads the profiles if they are not fresh; a failure leaves the last ones (or none). */
  async refreshProfiles(): Promise<void> {
    const now = this.#options.clock.now();
    if (this.#profiles !== undefined && now - this.#profilesReadAt < PROFILES_FRESH_MS) return;
    if (now - this.#profilesFailedAt < PROFILES_RETRY_MS) return;
    try {
      const result = await this.#options.run(['avdmanager', 'list', 'device'], {
        timeoutMs: AVDMANAGER_TIMEOUT_MS,
        env: { ANDROID_AVD_HOME: this.#options.avdHome },
      });
      if (result.exitCode !== 0) {
        throw new DriverError(
          `avdmanager list device exited ${result.exitCode}: ${avdmanagerText(result.stdout, result.stderr)}`,
        );
      }
      this.#profiles = parseDeviceProfiles(result.stdout);
      this.#profilesReadAt = now;
    } catch (error) {
      this.#profilesFailedAt = now;
      this.#problem = (error as Error).message;
      throw error;
    }
  }

  /** What the host can make now, narrowed by the config; empty when provisioning is off. */
  async offer(): Promise<MakeableModel[]> {
    if (!this.#options.provision.enabled) return [];
    const choices = await this.#choices().catch(() => undefined);
    if (choices === undefined) return [];
    const byModel = new Map<string, MakeableModel>();
    for (const { profile, image } of choices) {
      const klass = classOfProfile(profile)!;
      const model = byModel.get(profile.name) ?? {
        platform: 'android' as const,
        model: profile.name,
        class: klass,
        os: [],
      };
      if (!model.os.includes(image.apiLevel)) model.os.push(image.apiLevel);
      byModel.set(profile.name, model);
    }
    return [...byModel.values()]
      .map((model) => ({ ...model, os: model.os.sort((a, b) => Number(a) - Number(b)) }))
      .sort((a, b) => a.model.localeCompare(b.model))
      .slice(0, 256);
  }

  /** Creates AVD `name` of `want` in the agent's AVD home; resolves once avdmanager made it. */
  async create(want: DeviceToMake, name: string): Promise<void> {
    if (!this.#options.provision.enabled) {
      throw new DriverError(`adb makes no devices: provision.enabled is false`);
    }
    const choice = (await this.#choices()).find(
      ({ profile, image }) =>
        profile.name.toLowerCase() === want.model.toLowerCase() && image.apiLevel === want.os,
    );
    if (choice === undefined) {
      throw new DriverError(
        `adb cannot make a ${want.model} with API ${want.os}: the host offers no such profile and installed system image`,
      );
    }
    const { profile, image } = choice;
    const argv = [
      'avdmanager',
      'create',
      'avd',
      '-n',
      name,
      '-k',
      image.packagePath,
      '-d',
      profile.id,
    ] as const;
    const result = await this.#options.run(argv, {
      timeoutMs: AVDMANAGER_TIMEOUT_MS,
      env: { ANDROID_AVD_HOME: this.#options.avdHome },
      // Without -d avdmanager asks "Do you wish to create a custom hardware profile? [no]": the
      // answer is there and stdin is closed, so no version of it can wait on an open pipe.
      input: 'no\n',
    });
    if (result.exitCode === 0) return;
    const said = avdmanagerText(result.stdout, result.stderr);
    const what = `avdmanager create avd ${name} (${image.packagePath}, profile ${profile.id})`;
    switch (classifyAvdmanagerFailure(said)) {
      case 'unknown-profile':
        this.#profiles = undefined; // the list was stale: read it again next time
        throw new DriverError(`${what}: avdmanager has no device profile "${profile.id}": ${said}`);
      case 'image-not-installed':
        throw new DriverError(
          `${what}: system image ${image.packagePath} is not installed: ${said}`,
        );
      case 'disk-full':
        throw new DriverError(`${what}: no disk space left for the AVD: ${said}`);
      default:
        throw new DriverError(`${what} exited ${result.exitCode}: ${said}`);
    }
  }

  /** Deletes AVD `name` from the agent's AVD home; one already gone is fine. */
  async delete(name: string): Promise<void> {
    const result = await this.#options.run(['avdmanager', 'delete', 'avd', '-n', name], {
      timeoutMs: AVDMANAGER_TIMEOUT_MS,
      env: { ANDROID_AVD_HOME: this.#options.avdHome },
    });
    if (result.exitCode === 0) return;
    const said = avdmanagerText(result.stdout, result.stderr);
    if (classifyAvdmanagerFailure(said) === 'unknown-avd') return;
    throw new DriverError(`avdmanager delete avd ${name} exited ${result.exitCode}: ${said}`);
  }

  /** Every (profile, image) pair the config lets the host make. */
  async #choices(): Promise<Choice[]> {
    const { provision, arch } = this.#options;
    const sdkRoot = await this.#options.sdkRoot;
    if (sdkRoot === undefined) {
      this.#problem = 'no Android SDK found (set ANDROID_HOME): nothing can be made';
      throw new DriverError(this.#problem);
    }
    // Profiles read before stay good when a later read fails.
    await this.refreshProfiles().catch((error: unknown) => {
      if (this.#profiles === undefined) throw error;
    });
    const images = imagesByApiLevel(await readSystemImages(sdkRoot), arch);
    this.#problem = undefined;
    const wantedModels = new Set(provision.models.map((model) => model.toLowerCase()));
    const wantedOs = new Set(provision.os);
    const choices: Choice[] = [];
    for (const profile of this.#profiles ?? []) {
      if (classOfProfile(profile) === undefined) continue;
      const named =
        wantedModels.size === 0 ||
        wantedModels.has(profile.name.toLowerCase()) ||
        wantedModels.has(profile.id.toLowerCase());
      if (!named) continue;
      for (const image of images.values()) {
        if (wantedOs.size === 0 || wantedOs.has(image.apiLevel)) choices.push({ profile, image });
      }
    }
    return choices;
  }
}

/**
 * The SDK folder: $ANDROID_HOME, else the deprecated $ANDROID_SDK_ROOT, else the SDK that holds
 * the `avdmanager` on PATH (<sdk>/cmdline-tools/<version>/bin/avdmanager).
 */
export async function findSdkRoot(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (env.ANDROID_HOME) return env.ANDROID_HOME;
  if (env.ANDROID_SDK_ROOT) return env.ANDROID_SDK_ROOT;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const tool = join(dir, 'avdmanager');
    const found = await access(tool).then(
      () => true,
      () => false,
    );
    if (!found) continue;
    const real = await realpath(tool).catch(() => tool);
    const bin = dirname(real);
    const versionDir = dirname(bin);
    if (basename(dirname(versionDir)) === 'cmdline-tools') return dirname(dirname(versionDir));
    if (basename(versionDir) === 'tools') return dirname(versionDir); // the old SDK Tools
    return undefined;
  }
  return undefined;
}
