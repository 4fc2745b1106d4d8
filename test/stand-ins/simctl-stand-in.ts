// Test helper: a stateful stand-in for `xcrun simctl`. An executable `xcrun` written to a temp
// dir that tests put first on PATH (a shim its stand-in server answers: stand-in-server.ts); it keeps its device sets in a JSON file beside it (the default
// set and any `--set <path>`, each with its simulators), serves the host's device types and
// runtimes from recorded testdata, and answers list -j, create, boot, bootstatus, shutdown, erase,
// delete and the holder subcommands in simctl's formats and exit codes (simctl-outputs.ts). Every
// argv is logged, so a test can say which set each call named and that no set-wide command ran.
import { mkdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  BOOTSTATUS_ALREADY_BOOTED,
  BOOTSTATUS_BOOTED,
  GETENV_HOME,
  SIMCTL_REFUSALS,
} from './simctl-outputs.js';
import { SIMCTL_STAND_IN_SOURCE } from './simctl-stand-in-script.js';
import { scriptHandler } from './stand-in-script-host.js';
import { defaultLaunch, StandInServer, type StandInLaunch } from './stand-in-server.js';

/** One simulator as the stand-in keeps it. */
export interface StandInSimulator {
  udid: string;
  name: string;
  deviceTypeIdentifier: string;
  /** The runtime identifier (com.apple.CoreSimulator.SimRuntime.iOS-18-4). */
  runtime: string;
  state: 'Shutdown' | 'Booted' | 'Booting' | 'Shutting Down' | 'Creating';
  /** How many times it was erased and booted: a test's proof that nothing touched it. */
  erased: number;
  boots: number;
  lastBootedAt?: string;
  /** Control: its boots never complete (it stays Booting; bootstatus waits until stopped). */
  neverBoots?: boolean;
}

interface StandInState {
  sets: Record<string, StandInSimulator[]>;
  /** Control: the next create fails like this (then the field clears). */
  nextCreateFails: 'disk-full' | null;
}

/** The key of the user's default device set in the state file. */
export const DEFAULT_SET = 'default';

export class SimctlStandIn {
  private constructor(
    readonly dir: string,
    private readonly server: StandInServer | undefined,
  ) {}

  /**
   * `host` is a recorded `simctl list -j devicetypes runtimes` output: what the stand-in can make.
   * `defaultSet` seeds the user's default set (a person's simulators).
   */
  static async create(options: {
    host: string;
    defaultSet?: Array<Partial<StandInSimulator> & Pick<StandInSimulator, 'udid' | 'name'>>;
    launch?: StandInLaunch;
  }): Promise<SimctlStandIn> {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-simctl-'));
    const server =
      (options.launch ?? defaultLaunch()) === 'server'
        ? await StandInServer.start(scriptHandler(SIMCTL_STAND_IN_SOURCE, 'simctl-stand-in.cjs'))
        : undefined;
    const standIn = new SimctlStandIn(dir, server);
    await standIn.setHost(options.host);
    await writeFile(
      join(standIn.dir, 'simctl-outputs.json'),
      JSON.stringify({
        refusals: SIMCTL_REFUSALS,
        bootstatusAlreadyBooted: BOOTSTATUS_ALREADY_BOOTED,
        bootstatusBooted: BOOTSTATUS_BOOTED,
        getenvHome: GETENV_HOME,
      }),
    );
    const seeded = (options.defaultSet ?? []).map((device) => simulator(device));
    await standIn.#write({ sets: { [DEFAULT_SET]: seeded }, nextCreateFails: null });
    const xcrun = join(standIn.dir, 'xcrun');
    if (server !== undefined) {
      await server.writeShim(xcrun);
    } else {
      await writeFile(xcrun, `#!${process.execPath}\n${SIMCTL_STAND_IN_SOURCE}`);
      await chmod(xcrun, 0o755);
    }
    return standIn;
  }

  /** What the host can make from now on (a runtime installed or removed, Xcode updated). */
  async setHost(listing: string): Promise<void> {
    const host = JSON.parse(listing) as { devicetypes?: unknown[]; runtimes?: unknown[] };
    await writeFile(
      join(this.dir, 'simctl-host.json'),
      JSON.stringify({ devicetypes: host.devicetypes ?? [], runtimes: host.runtimes ?? [] }),
    );
  }

  /** The environment to run the driver in: the stand-in first on PATH. */
  get env(): NodeJS.ProcessEnv {
    return { ...process.env, PATH: `${this.dir}:${process.env.PATH ?? ''}` };
  }

  /** The simulators of a set: the default set, or the one at `setPath`. */
  async devices(setPath?: string): Promise<StandInSimulator[]> {
    const state = await this.#read();
    return state.sets[setPath === undefined ? DEFAULT_SET : resolve(setPath)] ?? [];
  }

  /** The sets the stand-in has seen: DEFAULT_SET and the paths given with --set. */
  async sets(): Promise<string[]> {
    return Object.keys((await this.#read()).sets);
  }

  /** Puts a simulator into a set, as a person (or Xcode) would. */
  async addDevice(
    setPath: string | undefined,
    device: Partial<StandInSimulator> & Pick<StandInSimulator, 'udid' | 'name'>,
  ): Promise<void> {
    const state = await this.#read();
    const key = setPath === undefined ? DEFAULT_SET : resolve(setPath);
    state.sets[key] = [...(state.sets[key] ?? []), simulator(device)];
    await this.#write(state);
  }

  /** Removes a simulator from a set behind the driver's back (a person deleting it). */
  async removeDevice(setPath: string | undefined, udid: string): Promise<void> {
    const state = await this.#read();
    const key = setPath === undefined ? DEFAULT_SET : resolve(setPath);
    state.sets[key] = (state.sets[key] ?? []).filter((device) => device.udid !== udid);
    await this.#write(state);
  }

  /**
   * The simulator crashes: a booted one goes Shutdown behind the driver's back (CoreSimulator
   * restarted, launchd_sim died), as `simctl list` then shows it.
   */
  async kill(setPath: string | undefined, udid: string): Promise<void> {
    await this.#change(setPath, udid, (device) => {
      device.state = 'Shutdown';
    });
  }

  /** Its boots never complete from now on (false: they complete again). */
  async setNeverBoots(setPath: string | undefined, udid: string, never: boolean): Promise<void> {
    await this.#change(setPath, udid, (device) => {
      if (never) device.neverBoots = true;
      else delete device.neverBoots;
    });
  }

  /** The next `simctl create` fails as on a full disk. */
  async failNextCreate(kind: 'disk-full'): Promise<void> {
    const state = await this.#read();
    state.nextCreateFails = kind;
    await this.#write(state);
  }

  /** Every argv xcrun was called with, in order (without the `xcrun` itself). */
  async calls(): Promise<string[][]> {
    const text = await readFile(join(this.dir, 'xcrun.calls.jsonl'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as string[]);
  }

  async clearCalls(): Promise<void> {
    await writeFile(join(this.dir, 'xcrun.calls.jsonl'), '');
  }

  // A tool the agent started just before it was killed may still write its state file while the
  // folder goes: rm tries again on ENOTEMPTY.
  async cleanup(): Promise<void> {
    await this.server?.close();
    await rm(this.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  }

  async #change(
    setPath: string | undefined,
    udid: string,
    change: (device: StandInSimulator) => void,
  ): Promise<void> {
    // Under the stand-in's own lock: a simctl call running now (a listing) cannot write its older
    // state over this change. Taken, changed and given back synchronously: a stand-in server in
    // this process answers calls synchronously too, and one that found the lock held across an
    // await here would wait for it blocking the very event loop that would free it.
    const lock = join(this.dir, 'simctl-state.json.lock');
    for (let tries = 0; ; tries++) {
      try {
        mkdirSync(lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || tries > 6000) throw error;
        await new Promise((wake) => setTimeout(wake, 5));
      }
    }
    try {
      const file = join(this.dir, 'simctl-state.json');
      const state = JSON.parse(readFileSync(file, 'utf8')) as StandInState;
      const key = setPath === undefined ? DEFAULT_SET : resolve(setPath);
      const device = (state.sets[key] ?? []).find((candidate) => candidate.udid === udid);
      if (device === undefined) throw new Error(`the stand-in has no simulator ${udid} in ${key}`);
      change(device);
      writeFileSync(`${file}.helper.tmp`, JSON.stringify(state, null, 2));
      renameSync(`${file}.helper.tmp`, file);
    } finally {
      rmdirSync(lock);
    }
  }

  async #read(): Promise<StandInState> {
    return JSON.parse(await readFile(join(this.dir, 'simctl-state.json'), 'utf8')) as StandInState;
  }

  async #write(state: StandInState): Promise<void> {
    const file = join(this.dir, 'simctl-state.json');
    await writeFile(`${file}.helper.tmp`, JSON.stringify(state, null, 2));
    await rename(`${file}.helper.tmp`, file);
  }
}

function simulator(
  device: Partial<StandInSimulator> & Pick<StandInSimulator, 'udid' | 'name'>,
): StandInSimulator {
  return {
    deviceTypeIdentifier: 'com.apple.CoreSimulator.SimDeviceType.iPhone-16',
    runtime: 'com.apple.CoreSimulator.SimRuntime.iOS-18-4',
    state: 'Shutdown',
    erased: 0,
    boots: 0,
    ...device,
  };
}
