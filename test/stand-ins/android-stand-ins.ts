// Test helper: stateful stand-ins for `adb`, `emulator` and `avdmanager`, executables written to a
// temp dir that tests put first on PATH (like StandIns in stand-in.ts; shims answered by a stand-in
// server, stand-in-server.ts). They keep one JSON state
// (android-tools.ts does the work), an Android SDK folder with the installed system images, and a
// default AVD home, and log every call with the AVD home and adb server it used.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { AndroidState, CallRecord, PhoneRecord, Profile } from './android-state.js';
import type { CommandRunner, DetachedSpawner } from '../../agent/index.js';
import { writeAvdFiles } from './android-avdmanager.js';
import { killEmulator } from './android-emulator.js';
import { CALLS_FILE, STATE_FILE, withState } from './android-tool-common.js';
import { runTool } from './android-tools.js';
import { defaultLaunch, StandInServer, type StandInLaunch } from './stand-in-server.js';

export type { AndroidState, CallRecord, PhoneRecord, Profile } from './android-state.js';

export interface InstalledImage {
  /** system-images;android-34;google_apis;x86_64 */
  packagePath: string;
  /** The image's source.properties as the SDK has it. */
  sourceProperties: string;
}

export interface AndroidStandInsOptions {
  profiles: Profile[];
  images: InstalledImage[];
  phones?: PhoneRecord[];
  /** Shims answered by a stand-in server (the default), or a Node process per call. */
  launch?: StandInLaunch;
}

const TOOLS = ['adb', 'emulator', 'avdmanager'] as const;
const TOOLS_MODULE = fileURLToPath(new URL('./android-tools.ts', import.meta.url));

export class AndroidStandIns {
  private constructor(
    /** The executables and their state. */
    readonly dir: string,
    readonly sdkRoot: string,
    /** ANDROID_AVD_HOME of the environment the tests give the agent: the person's AVDs. */
    readonly defaultAvdHome: string,
    private readonly server: StandInServer | undefined,
  ) {}

  static async create(options: AndroidStandInsOptions): Promise<AndroidStandIns> {
    const root = await mkdtemp(join(tmpdir(), 'simlock-android-'));
    // The executables' entry, main() of android-tools.ts, run for each call in the server.
    const server =
      (options.launch ?? defaultLaunch()) === 'server'
        ? await StandInServer.start((call) =>
            runTool(call.tool, dirname(call.file), call.argv, call.env, call.readLine),
          )
        : undefined;
    const standIns = new AndroidStandIns(
      join(root, 'bin'),
      join(root, 'sdk'),
      join(root, 'home', '.android', 'avd'),
      server,
    );
    await mkdir(standIns.dir, { recursive: true });
    await mkdir(standIns.defaultAvdHome, { recursive: true });
    const state: AndroidState = {
      profiles: options.profiles,
      images: [],
      homes: {},
      servers: {},
      emulators: {},
      phones: options.phones ?? [],
      control: {},
    };
    await writeFile(join(standIns.dir, STATE_FILE), JSON.stringify(state));
    await writeFile(join(standIns.dir, CALLS_FILE), '');
    for (const tool of TOOLS) {
      const file = join(standIns.dir, tool);
      if (server !== undefined) {
        await server.writeShim(file);
        continue;
      }
      // Node strips the types of android-tools.ts as it loads it (Node 22.18 and later).
      await writeFile(
        file,
        `#!${process.execPath} --no-warnings\n` +
          `import(${JSON.stringify(pathToFileURL(TOOLS_MODULE).href)})` +
          `.then((tools) => tools.main(${JSON.stringify(tool)}, __dirname));\n`,
      );
      await chmod(file, 0o755);
    }
    for (const image of options.images) await standIns.installImage(image);
    return standIns;
  }

  /** The agent's environment: stand-ins first on PATH, the SDK, the default AVD home. */
  get env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PATH: `${this.dir}:${process.env.PATH ?? ''}`,
      ANDROID_HOME: this.sdkRoot,
      ANDROID_AVD_HOME: this.defaultAvdHome,
    };
    for (const name of ['ANDROID_SDK_ROOT', 'ANDROID_ADB_SERVER_PORT', 'ANDROID_SERIAL']) {
      delete env[name];
    }
    return env;
  }

  async state(): Promise<AndroidState> {
    return JSON.parse(await readFile(join(this.dir, STATE_FILE), 'utf8')) as AndroidState;
  }

  update<T>(change: (state: AndroidState) => T): T {
    return withState(this.dir, change);
  }

  /** Every call of the three tools, in order, with the AVD home and server each one used. */
  async calls(): Promise<CallRecord[]> {
    const text = await readFile(join(this.dir, CALLS_FILE), 'utf8');
    return text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as CallRecord);
  }

  async installImage(image: InstalledImage): Promise<void> {
    const [, platform = '', tag = '', abi = ''] = image.packagePath.split(';');
    const dir = join(this.sdkRoot, 'system-images', platform, tag, abi);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'source.properties'), image.sourceProperties);
    this.update((state) => {
      if (!state.images.includes(image.packagePath)) state.images.push(image.packagePath);
    });
  }

  async removeImage(packagePath: string): Promise<void> {
    const [, platform = '', tag = '', abi = ''] = packagePath.split(';');
    await rm(join(this.sdkRoot, 'system-images', platform, tag, abi), {
      recursive: true,
      force: true,
    });
    this.update((state) => {
      state.images = state.images.filter((image) => image !== packagePath);
    });
  }

  /** An AVD made by a person in `home` (as avdmanager would have). */
  addAvd(home: string, name: string, image: string, profileId: string): void {
    this.update((state) => {
      const profile = state.profiles.find((candidate) => candidate.id === profileId);
      if (profile === undefined) throw new Error(`no profile ${profileId}`);
      const record = { image, profile: profileId, boots: 0, wipes: 0 };
      writeAvdFiles(home, name, record, profile);
      (state.homes[home] ??= {})[name] = record;
    });
  }

  /**
   * A runner that does what the executables do without starting processes (for tests that make
   * thousands of calls): the same state, log and outputs; `env` is overlaid as the real runner
   * does. A call with no input that reads stdin fails, as the real one would hang.
   */
  inProcess(env: NodeJS.ProcessEnv = this.env): {
    run: CommandRunner;
    spawnDetached: DetachedSpawner;
  } {
    const call = (argv: readonly string[], extra?: NodeJS.ProcessEnv, input?: string) => {
      const [tool = '', ...args] = argv;
      if (!(TOOLS as readonly string[]).includes(tool)) throw new Error(`no stand-in ${tool}`);
      return runTool(tool, this.dir, args, { ...env, ...extra }, () => {
        if (input === undefined) throw new Error(`${tool} read stdin, which was left open`);
        return input;
      });
    };
    return {
      run: (argv, options = {}) => Promise.resolve(call(argv, options.env, options.input)),
      spawnDetached: (argv, options = {}) => {
        call(argv, options.env);
        return Promise.resolve();
      },
    };
  }

  /**
   * The emulator running `avd` crashes: its process exits, its serial leaves `adb devices` and
   * its AVD's lock goes. Throws when no emulator runs it.
   */
  killEmulator(avd: string): void {
    this.update((state) => {
      const port = Object.entries(state.emulators).find(([, emu]) => emu.avd === avd)?.[0];
      if (port === undefined) throw new Error(`no emulator runs ${avd}`);
      killEmulator(state, Number(port));
    });
  }

  /** Emulators of `avd` started from now on never finish booting (false: they boot again). */
  setNeverBoots(avd: string, never: boolean): void {
    this.update((state) => {
      const others = (state.control.neverBoots ?? []).filter((name) => name !== avd);
      state.control.neverBoots = never ? [...others, avd] : others;
    });
  }

  /** Makes the next `avdmanager create avd` fail as on a full disk. */
  failNextCreate(): void {
    this.update((state) => {
      state.control.failNextCreate = 'disk-full';
    });
  }

  // A tool the agent started just before it was killed may still write its state file while the
  // folder goes: rm tries again on ENOTEMPTY.
  async cleanup(): Promise<void> {
    await this.server?.close();
    await rm(join(this.dir, '..'), {
      recursive: true,
      force: true,
      maxRetries: 10,
      retryDelay: 100,
    });
  }
}
