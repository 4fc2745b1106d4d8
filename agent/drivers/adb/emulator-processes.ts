// The emulators running on the agent's adb server: starting one on a free console port and
// waiting for its boot, killing one, asking whether one still answers, and which serial
// (emulator-5600…) each running AVD has. Apart from adb.ts, which decides what may be booted or
// shut down (its AVD homes, what it made, phones): this file only runs and tracks the processes.
import { rm, stat } from 'node:fs/promises';
import { sleep, type Clock } from '../../../runtime/index.js';
import type { DetachedSpawner } from '../command.js';
import { DriverError } from '../driver.js';
import { parseAvdList, type AdbEntry } from './adb-output.js';
import { emulatorPort, FIRST_OWN_PORT, LAST_OWN_PORT, type AdbServers } from './adb-servers.js';

/** A running emulator answers getprop at once; one that hangs is not answering. */
const CHECK_TIMEOUT_MS = 15_000;

export interface EmulatorProcessesOptions {
  servers: AdbServers;
  spawnDetached: DetachedSpawner;
  clock: Clock;
  /** Whether nothing listens on a loopback port (a console port must be free to boot on it). */
  isPortFree: (port: number) => Promise<boolean>;
  bootTimeoutMs: number;
  shutdownTimeoutMs: number;
  pollIntervalMs: number;
}

export class EmulatorProcesses {
  readonly #servers: AdbServers;
  readonly #spawnDetached: DetachedSpawner;
  readonly #clock: Clock;
  readonly #isPortFree: (port: number) => Promise<boolean>;
  readonly #bootTimeoutMs: number;
  readonly #shutdownTimeoutMs: number;
  readonly #pollIntervalMs: number;

  /** Running AVD → its serial on the agent's server. */
  readonly #serialByAvd = new Map<string, string>();
  /** Serial → AVD, for serials already asked (`emu avd name`). */
  readonly #avdBySerial = new Map<string, string>();
  /**
   * Ports not free though `adb devices` may not say so: taken by boots in flight (not listed yet),
   * and held by emulators being killed until they are gone from the list. An emulator booted on
   * the port of one being killed would read, to the kill's wait, as that one still running: the
   * kill then waited its whole timeout and the reclaim quarantined the device.
   */
  readonly #portsHeld = new Set<number>();
  /**
   * When each serial was taken in by a boot (a count of boots): a listing forgets only serials its
   * `adb devices` could have shown. One read before a boot registered its emulator, and answering
   * after it, would otherwise forget the new serial: the device read as not running, the agent's
   * probe took that for a crash and killed the emulator it had just booted.
   */
  readonly #bootedAt = new Map<string, number>();
  #boots = 0;

  constructor(options: EmulatorProcessesOptions) {
    this.#servers = options.servers;
    this.#spawnDetached = options.spawnDetached;
    this.#clock = options.clock;
    this.#isPortFree = options.isPortFree;
    this.#bootTimeoutMs = options.bootTimeoutMs;
    this.#shutdownTimeoutMs = options.shutdownTimeoutMs;
    this.#pollIntervalMs = options.pollIntervalMs;
  }

  /** The serial of a running AVD on the agent's server, if it runs. */
  serialOf(avd: string): string | undefined {
    return this.#serialByAvd.get(avd);
  }

  /**
   * Boots `avd` on a free console port and waits until it has booted, wiping its data first when
   * `wipeMarker` exists (the marker is removed after the boot). `env` is its AVD home's.
   */
  async start(avd: string, env: NodeJS.ProcessEnv, wipeMarker: string): Promise<void> {
    // The emulator registers with the server it is told of when it starts: that one must be up.
    await this.#servers.startAgentServer(true);
    // Taken in #portsHeld by #freePort itself, so a boot running beside this one cannot pick it.
    const port = await this.#freePort();
    const serial = `emulator-${port}`;
    let foreign: string | undefined;
    try {
      const wipe = await stat(wipeMarker).then(
        () => true,
        () => false,
      );
      await this.#spawnDetached(
        [
          'emulator',
          '-avd',
          avd,
          '-port',
          String(port),
          '-no-window',
          '-no-audio',
          '-no-boot-anim',
          ...(wipe ? ['-wipe-data'] : []),
        ],
        { env: { ...env, ANDROID_ADB_SERVER_PORT: String(this.#servers.port) } },
      );
      await this.#waitFor(
        async () => {
          if (!(await this.bootCompleted(serial))) return false;
          // An emulator that registers on the port after it was found free (one a previous life
          // of the agent started just before it stopped) makes ours fail unseen, and the wait
          // would take that one for ours: the holder would drive another device.
          const running = await this.#avdNameOn(serial);
          if (running === avd) return true;
          foreign = running ?? 'an emulator that does not say its AVD';
          throw new DriverError(`${avd} did not start on ${serial}: ${foreign} runs there`);
        },
        this.#bootTimeoutMs,
        `${avd} did not finish booting on ${serial}`,
      );
      this.#serialByAvd.set(avd, serial);
      this.#avdBySerial.set(serial, avd);
      this.#bootedAt.set(serial, ++this.#boots);
      if (wipe) await rm(wipeMarker, { force: true });
    } catch (error) {
      // Do not leave a half-booted emulator holding RAM; one that is not ours is left alone.
      if (foreign === undefined)
        await this.#servers.runOnAgent(['-s', serial, 'emu', 'kill']).catch(() => undefined);
      throw error;
    } finally {
      this.#portsHeld.delete(port);
    }
  }

  /** Kills the emulator running `avd` (none: nothing to do) and waits until its serial is gone. */
  async kill(avd: string): Promise<void> {
    const serial = this.#serialByAvd.get(avd);
    if (serial === undefined) return;
    const port = emulatorPort(serial);
    if (port !== undefined) this.#portsHeld.add(port);
    try {
      const result = await this.#servers.runOnAgent(['-s', serial, 'emu', 'kill']);
      if (result.exitCode !== 0 && !/not found/.test(result.stderr)) {
        throw new DriverError(
          `adb -P ${this.#servers.port} -s ${serial} emu kill exited ${result.exitCode}: ${result.stderr.trim().slice(0, 500)}`,
        );
      }
      await this.#waitFor(
        async () =>
          !(await this.#servers.agentEmulators()).some((entry) => entry.serial === serial),
        this.#shutdownTimeoutMs,
        `${avd} (${serial}) did not shut down`,
      );
      this.#serialByAvd.delete(avd);
      this.#avdBySerial.delete(serial);
      this.#bootedAt.delete(serial);
    } finally {
      if (port !== undefined) this.#portsHeld.delete(port);
    }
  }

  /**
   * Asks the running emulator whether it has booted (`getprop sys.boot_completed` on the agent's
   * server): it fails for an emulator whose process exited (its serial is gone from `adb
   * devices`: "device not found"), one that no longer answers (the timeout), or one that has not
   * finished booting.
   */
  async check(avd: string): Promise<void> {
    const serial = this.#serialByAvd.get(avd);
    if (serial === undefined) throw new DriverError(`emulator ${avd} is not running`);
    const args = ['-s', serial, 'shell', 'getprop', 'sys.boot_completed'];
    const result = await this.#servers.runOnAgent(args, { timeoutMs: CHECK_TIMEOUT_MS });
    const answer = result.stdout.trim();
    if (result.exitCode === 0 && answer === '1') return;
    const said =
      result.exitCode !== 0
        ? `exited ${result.exitCode}: ${result.stderr.trim().slice(0, 300)}`
        : `answered ${JSON.stringify(answer.slice(0, 40))}, not 1`;
    throw new DriverError(`adb -P ${this.#servers.port} ${args.join(' ')} ${said}`);
  }

  /** Which AVD each emulator serial on the agent's server runs (asked once per serial). */
  async running(): Promise<Map<string, AdbEntry>> {
    const bootsBefore = this.#boots;
    const entries = await this.#servers.agentEmulators();
    const running = new Map<string, AdbEntry>();
    const serials = new Set(entries.map((entry) => entry.serial));
    for (const [serial, avd] of this.#avdBySerial) {
      if (serials.has(serial) || (this.#bootedAt.get(serial) ?? 0) > bootsBefore) continue;
      this.#avdBySerial.delete(serial);
      this.#bootedAt.delete(serial);
      if (this.#serialByAvd.get(avd) === serial) this.#serialByAvd.delete(avd);
    }
    for (const entry of entries) {
      let avd = this.#avdBySerial.get(entry.serial);
      if (avd === undefined) {
        avd = await this.#avdNameOn(entry.serial);
        if (avd === undefined) continue;
        this.#avdBySerial.set(entry.serial, avd);
      }
      this.#serialByAvd.set(avd, entry.serial);
      running.set(avd, entry);
    }
    return running;
  }

  /** The AVD the emulator on `serial` runs, as it says (`emu avd name`); undefined if it does not. */
  async #avdNameOn(serial: string): Promise<string | undefined> {
    const answer = await this.#servers.runOnAgent(['-s', serial, 'emu', 'avd', 'name']);
    const name = answer.exitCode === 0 ? parseAvdList(answer.stdout)[0] : undefined;
    return name === 'OK' ? undefined : name;
  }

  async bootCompleted(serial: string): Promise<boolean> {
    const result = await this.#servers.runOnAgent([
      '-s',
      serial,
      'shell',
      'getprop',
      'sys.boot_completed',
    ]);
    return result.exitCode === 0 && result.stdout.trim() === '1';
  }

  /**
   * An even console port from 5600 up that no emulator of the agent's and nothing else holds,
   * added to #portsHeld before it is returned: the check after the last await and the add run
   * as one step, so two boots at once never get the same port (the second `emulator -port` would
   * fail unseen and its boot wait would find the first one's emulator booted).
   */
  async #freePort(): Promise<number> {
    const taken = new Set<number>();
    for (const entry of await this.#servers.agentEmulators()) {
      const port = emulatorPort(entry.serial);
      if (port !== undefined) taken.add(port);
    }
    for (let port = FIRST_OWN_PORT; port <= LAST_OWN_PORT; port += 2) {
      if (taken.has(port) || this.#portsHeld.has(port)) continue;
      if (!(await this.#isPortFree(port)) || !(await this.#isPortFree(port + 1))) continue;
      if (this.#portsHeld.has(port)) continue;
      this.#portsHeld.add(port);
      return port;
    }
    throw new DriverError(`no free emulator port between ${FIRST_OWN_PORT} and ${LAST_OWN_PORT}`);
  }

  async #waitFor(check: () => Promise<boolean>, timeoutMs: number, failure: string): Promise<void> {
    const deadline = this.#clock.now() + timeoutMs;
    for (;;) {
      if (await check()) return;
      if (this.#clock.now() >= deadline) throw new DriverError(`${failure} within ${timeoutMs} ms`);
      await sleep(this.#clock, this.#pollIntervalMs);
    }
  }
}
