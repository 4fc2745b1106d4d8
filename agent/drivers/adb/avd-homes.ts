// Where the AVDs the driver may touch live: the agent's own AVD home (<dataDir>/avd, every
// `emulator` and `avdmanager` call about it runs with ANDROID_AVD_HOME set to it) and, for AVDs
// named in `adb.adopt` only, the default AVD home of the agent's environment. Nothing else of the
// default home is listed.
import { access, mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { runChecked, type CommandRunner } from '../command.js';
import { describeAvd, parseAvdList, parseIni, type AvdDescription } from './adb-output.js';

/** `own`: in the agent's AVD home, made by it. `adopted`: in the default home, opted in by name. */
export type AvdPlace = 'own' | 'adopted';

export interface PlacedAvd extends AvdDescription {
  place: AvdPlace;
  /** The AVD's data folder (<name>.avd), where a running emulator keeps its lock files. */
  dir: string;
}

interface AvdFiles {
  dir: string;
  configIni: string;
}

/** The default AVD home: $ANDROID_AVD_HOME, $ANDROID_USER_HOME/avd, or ~/.android/avd. */
export function defaultAvdHome(env: NodeJS.ProcessEnv): string {
  if (env.ANDROID_AVD_HOME) return env.ANDROID_AVD_HOME;
  if (env.ANDROID_USER_HOME) return join(env.ANDROID_USER_HOME, 'avd');
  return join(env.HOME ?? homedir(), '.android', 'avd');
}

export class AvdHomes {
  readonly #run: CommandRunner;
  readonly ownHome: string;
  readonly defaultHome: string;
  readonly adopt: ReadonlySet<string>;
  /** Files read per `<place>/<name>`: an AVD's config does not change while it exists. */
  readonly #files = new Map<string, AvdFiles>();
  #ownHomeMade = false;

  constructor(run: CommandRunner, ownHome: string, defaultHome: string, adopt: Iterable<string>) {
    this.#run = run;
    this.ownHome = ownHome;
    this.defaultHome = defaultHome;
    this.adopt = new Set(adopt);
  }

  /** The variables every `emulator` or `avdmanager` call about an AVD of `place` runs with. */
  envFor(place: AvdPlace): NodeJS.ProcessEnv {
    return place === 'own' ? { ANDROID_AVD_HOME: this.ownHome } : {};
  }

  async makeOwnHome(): Promise<void> {
    if (this.#ownHomeMade) return;
    await mkdir(this.ownHome, { recursive: true });
    this.#ownHomeMade = true;
  }

  /**
   * The AVDs of the agent's home, then the adopted ones of the default home (an adopted name that
   * the agent's home also has is the agent's own).
   */
  async list(profileNames: ReadonlyMap<string, string>): Promise<PlacedAvd[]> {
    await this.makeOwnHome();
    const avds: PlacedAvd[] = [];
    const own = await this.#names('own');
    for (const name of own) {
      const avd = await this.#describe('own', name, profileNames);
      if (avd !== undefined) avds.push(avd);
    }
    if (this.adopt.size > 0) {
      for (const name of await this.#names('adopted')) {
        if (!this.adopt.has(name) || own.includes(name)) continue;
        const avd = await this.#describe('adopted', name, profileNames);
        if (avd !== undefined) avds.push(avd);
      }
    }
    return avds;
  }

  /** Reads an AVD of the agent's home now (after avdmanager made it). */
  async describeOwn(
    name: string,
    profileNames: ReadonlyMap<string, string>,
  ): Promise<PlacedAvd | undefined> {
    this.forget('own', name);
    return this.#describe('own', name, profileNames);
  }

  forget(place: AvdPlace, name: string): void {
    this.#files.delete(`${place}/${name}`);
  }

  /** Whether an emulator holds the AVD (its lock file), whichever adb server it is on. */
  async isLocked(avd: PlacedAvd): Promise<boolean> {
    return access(join(avd.dir, 'hardware-qemu.ini.lock')).then(
      () => true,
      () => false,
    );
  }

  async #names(place: AvdPlace): Promise<string[]> {
    const result = await runChecked(this.#run, ['emulator', '-list-avds'], {
      env: this.envFor(place),
    });
    return parseAvdList(result.stdout);
  }

  async #describe(
    place: AvdPlace,
    name: string,
    profileNames: ReadonlyMap<string, string>,
  ): Promise<PlacedAvd | undefined> {
    const key = `${place}/${name}`;
    let files = this.#files.get(key);
    if (files === undefined) {
      files = await this.#readFiles(place === 'own' ? this.ownHome : this.defaultHome, name);
      if (files === undefined) return undefined;
      this.#files.set(key, files);
    }
    const description = describeAvd(name, files.configIni, profileNames);
    return description === undefined ? undefined : { ...description, place, dir: files.dir };
  }

  async #readFiles(home: string, name: string): Promise<AvdFiles | undefined> {
    const beside = join(home, `${name}.avd`);
    const text = await readFile(join(beside, 'config.ini'), 'utf8').catch(() => undefined);
    if (text !== undefined) return { dir: beside, configIni: text };
    // Some AVDs live elsewhere; their <name>.ini says where.
    const pointer = await readFile(join(home, `${name}.ini`), 'utf8').catch(() => '');
    const path = parseIni(pointer).get('path');
    if (path === undefined || !isAbsolute(path)) return undefined;
    const configIni = await readFile(join(path, 'config.ini'), 'utf8').catch(() => undefined);
    return configIni === undefined ? undefined : { dir: path, configIni };
  }
}
