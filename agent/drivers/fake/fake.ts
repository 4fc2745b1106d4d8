// The fake driver: scripted devices, catalog, presence and failures (DESIGN.md §5), for unit
// tests, the e2e fleet and the demo. Time comes from the injected clock; exec runs a real child
// process that prints the argv a real driver would have run, aimed at the leased device.
import type { z } from 'zod';
import type { Platform, Presence } from '../../../api/index.js';
import { sleep, systemClock, type Clock } from '../../../runtime/index.js';
import {
  classFromModelName,
  DriverError,
  type DeviceListing,
  type DeviceToMake,
  type Driver,
  type MakeableModel,
  type DriverDevice,
  type ExecPlan,
  type PowerState,
  type ResetBaseline,
} from '../driver.js';
import { fakeCatalog } from './fake-catalog.js';
import { fakeExecArgv } from './fake-exec.js';
import {
  FakeDevice,
  FollowedScriptFile,
  parseFakeScript,
  readFakeScript,
  type FakeScript,
  type FakeScriptInput,
} from './fake-script.js';

export interface FakeDriverOptions {
  clock?: Clock;
  /** The file the script came from; `reload()` reads it again. */
  scriptPath?: string;
}

/** What the fake was asked to do, in order, for tests to check. */
export interface FakeOperation {
  operation: 'boot' | 'shutdown' | 'erase' | 'reset' | 'readResetBaseline' | 'create' | 'delete';
  deviceId: string;
}

export class FakeDriver implements Driver {
  readonly kind = 'fake';
  readonly #clock: Clock;
  readonly #startedAt: number;
  /** The file the script came from, followed while the agent runs. */
  readonly #scriptFile: FollowedScriptFile | undefined;
  #script: FakeScript;
  #power = new Map<string, PowerState>();
  #presenceOverride = new Map<string, Presence>();
  /** Devices the fake made (create): kept when the script file is read again. */
  #made: FakeDevice[] = [];
  #healthyOverride: boolean | undefined;
  readonly #checkFails = new Set<string>();
  readonly operations: FakeOperation[] = [];

  constructor(script: FakeScriptInput | FakeScript, options: FakeDriverOptions = {}) {
    this.#clock = options.clock ?? systemClock();
    this.#startedAt = this.#clock.now();
    this.#scriptFile =
      options.scriptPath === undefined ? undefined : new FollowedScriptFile(options.scriptPath);
    this.#script = parseFakeScript(script);
    this.#applyPower(this.#script);
  }

  static async fromFile(path: string, options: Omit<FakeDriverOptions, 'scriptPath'> = {}) {
    return new FakeDriver(await readFakeScript(path), { ...options, scriptPath: path });
  }

  get platforms(): readonly Platform[] {
    return (
      this.#script.platforms ?? [
        ...new Set([...this.#script.devices, ...this.#script.makeable].map((d) => d.platform)),
      ]
    );
  }

  /**
   * A script file edited while the agent runs is read again at the next listing, presence read,
   * make or boot (a real tool answers by the host as it is when called): how the e2e tests and the
   * demo plug a phone out and back in, remove a device, or let a failing boot pass.
   */
  #followFile(): void {
    const script = this.#scriptFile?.changed();
    if (script === undefined) return;
    this.#script = script;
    this.#applyPower(script);
    this.#presenceOverride.clear();
  }

  listDevices(): Promise<DeviceListing> {
    this.#followFile();
    if (this.#script.failures.list) {
      return Promise.reject(new DriverError('fake: listDevices fails (scripted)'));
    }
    const devices = this.#allDevices().map((device) => this.#driverDevice(device));
    const makeable = this.#makeable();
    const catalog = fakeCatalog(this.#script, this.platforms, devices, makeable);
    return Promise.resolve({ catalog, devices, makeable });
  }

  async create(want: DeviceToMake, name: string): Promise<DriverDevice> {
    this.#followFile();
    this.operations.push({ operation: 'create', deviceId: name });
    const model = this.#makeable().find(
      (entry) => entry.platform === want.platform && entry.model === want.model,
    );
    if (model === undefined || !model.os.includes(want.os)) {
      throw new DriverError(`fake: cannot make ${want.model} (${want.os}): not makeable`);
    }
    await sleep(this.#clock, this.#script.provisionMs);
    if (this.#script.failures.create.includes(want.model)) {
      throw new DriverError(`fake: making ${want.model} fails (scripted)`);
    }
    // Named like its model, as Xcode names a new simulator; its id is the name simlock gave it.
    const device = FakeDevice.parse({
      id: name,
      name: want.model,
      model: want.model,
      platform: want.platform,
      os: want.os,
      class: model.class,
    });
    this.#made.push(device);
    this.#power.set(device.id, 'shutdown');
    return this.#driverDevice(device);
  }

  delete(device: DriverDevice): Promise<void> {
    this.operations.push({ operation: 'delete', deviceId: device.id });
    if (!this.#made.some((made) => made.id === device.id)) {
      return Promise.reject(new DriverError(`fake: ${device.id} was not made by the agent`));
    }
    this.#made = this.#made.filter((made) => made.id !== device.id);
    this.#power.delete(device.id);
    return Promise.resolve();
  }

  async boot(device: DriverDevice): Promise<void> {
    this.#followFile();
    this.operations.push({ operation: 'boot', deviceId: device.id });
    this.#requireVirtual(device, 'boot');
    if (this.#power.get(device.id) === 'booted') return;
    this.#power.set(device.id, 'transitioning');
    await sleep(this.#clock, this.#bootMsOf(device));
    if (this.#script.failures.boot.includes(device.id)) {
      this.#power.set(device.id, 'shutdown');
      throw new DriverError(`fake: boot of ${device.id} fails (scripted)`);
    }
    this.#power.set(device.id, 'booted');
  }

  shutdown(device: DriverDevice): Promise<void> {
    this.operations.push({ operation: 'shutdown', deviceId: device.id });
    this.#requireVirtual(device, 'shut down');
    this.#power.set(device.id, 'shutdown');
    return Promise.resolve();
  }

  erase(device: DriverDevice): Promise<void> {
    this.operations.push({ operation: 'erase', deviceId: device.id });
    this.#requireVirtual(device, 'erase');
    if (this.#script.failures.erase.includes(device.id)) {
      return Promise.reject(new DriverError(`fake: erase of ${device.id} fails (scripted)`));
    }
    this.#power.set(device.id, 'shutdown');
    return Promise.resolve();
  }

  readResetBaseline(device: DriverDevice): Promise<ResetBaseline> {
    this.operations.push({ operation: 'readResetBaseline', deviceId: device.id });
    return Promise.resolve({ apps: [] });
  }

  reset(device: DriverDevice): Promise<void> {
    this.operations.push({ operation: 'reset', deviceId: device.id });
    return Promise.resolve();
  }

  readPresence(device: DriverDevice): Promise<Presence> {
    this.#followFile();
    if (this.#script.failures.presenceRead.includes(device.id)) {
      return Promise.reject(new DriverError(`fake: presence read of ${device.id} fails`));
    }
    const scripted = this.#script.devices.find((candidate) => candidate.id === device.id);
    if (scripted === undefined) return Promise.resolve({ present: false, reason: 'not-present' });
    return Promise.resolve(this.#presenceOf(scripted));
  }

  checkHealth(): Promise<void> {
    const elapsed = this.#clock.now() - this.#startedAt;
    const inWindow = this.#script.failures.unhealthyWindows.some(
      (window) => elapsed >= window.fromMs && elapsed < window.toMs,
    );
    const unhealthy =
      this.#healthyOverride === undefined
        ? this.#script.failures.unhealthy || inWindow
        : !this.#healthyOverride;
    return unhealthy
      ? Promise.reject(new DriverError('fake: health check fails (scripted)'))
      : Promise.resolve();
  }

  /** Fails when the device is not booted, or its check is scripted (or set) to fail. */
  checkDevice(device: DriverDevice): Promise<void> {
    this.#requireVirtual(device, 'check');
    const power = this.#power.get(device.id) ?? 'shutdown';
    if (power !== 'booted') {
      return Promise.reject(new DriverError(`fake: ${device.id} is not running (${power})`));
    }
    if (this.#checkFails.has(device.id) || this.#script.failures.check.includes(device.id)) {
      return Promise.reject(new DriverError(`fake: ${device.id} does not answer (scripted)`));
    }
    return Promise.resolve();
  }

  execArgv(tool: string, args: readonly string[], device: DriverDevice): ExecPlan {
    return fakeExecArgv(this.#script.tools, tool, args, device);
  }

  // --- changes at run time, for tests and the demo ---

  /** Sets a device's presence from now on, over its script. */
  setPresence(deviceId: string, presence: Presence): void {
    this.#presenceOverride.set(deviceId, presence);
  }

  /** The device stops behind the agent's back (a simulator that crashed): it lists shut down. */
  crash(deviceId: string): void {
    if (this.#power.has(deviceId)) this.#power.set(deviceId, 'shutdown');
  }

  /** Its per-device check fails (true) while it stays listed booted, or passes again (false). */
  setCheckFails(deviceId: string, fails: boolean): void {
    if (fails) this.#checkFails.add(deviceId);
    else this.#checkFails.delete(deviceId);
  }

  /** Overrides the scripted health (undefined: back to the script). */
  setHealthy(healthy: boolean | undefined): void {
    this.#healthyOverride = healthy;
  }

  addDevice(device: z.input<typeof FakeDevice>): void {
    const parsed = FakeDevice.parse(device);
    if (this.#script.devices.some((existing) => existing.id === parsed.id)) {
      throw new DriverError(`fake: device ${parsed.id} exists`);
    }
    this.#script = { ...this.#script, devices: [...this.#script.devices, parsed] };
    this.#power.set(parsed.id, parsed.booted ? 'booted' : 'shutdown');
  }

  removeDevice(deviceId: string): void {
    this.#script = {
      ...this.#script,
      devices: this.#script.devices.filter((device) => device.id !== deviceId),
    };
    this.#power.delete(deviceId);
    this.#presenceOverride.delete(deviceId);
  }

  /** Reads the script file again: devices added or removed; running devices keep running. */
  async reload(): Promise<void> {
    if (this.#scriptFile === undefined) throw new DriverError('fake: no script file to reload');
    const script = await readFakeScript(this.#scriptFile.path);
    this.#script = script;
    this.#applyPower(script);
  }

  // --- internals ---

  /** A device made of a makeable model boots at that model's speed, if the script gives one. */
  #bootMsOf(device: DriverDevice): number {
    const made = this.#made.some((entry) => entry.id === device.id);
    const model = made
      ? this.#script.makeable.find(
          (entry) => entry.platform === device.platform && entry.model === device.model,
        )
      : undefined;
    return model?.bootMs ?? this.#script.bootMs;
  }

  #allDevices(): FakeDevice[] {
    return [...this.#script.devices, ...this.#made];
  }

  #makeable(): MakeableModel[] {
    return this.#script.makeable.map((entry) => ({
      platform: entry.platform,
      model: entry.model,
      class: entry.class ?? classFromModelName(entry.model),
      os: [...entry.os],
    }));
  }

  #applyPower(script: FakeScript): void {
    const next = new Map<string, PowerState>();
    for (const device of [...script.devices, ...this.#made]) {
      next.set(device.id, this.#power.get(device.id) ?? (device.booted ? 'booted' : 'shutdown'));
    }
    this.#power = next;
  }

  #driverDevice(device: FakeDevice): DriverDevice {
    return {
      ...(this.#made.some((made) => made.id === device.id) ? { deletable: true } : {}),
      id: device.id,
      name: device.name ?? device.model,
      model: device.model,
      platform: device.platform,
      os: device.os,
      physical: device.physical,
      class: device.class ?? classFromModelName(device.model),
      power: device.physical
        ? this.#presenceOf(device).present
          ? 'booted'
          : 'unavailable'
        : (this.#power.get(device.id) ?? 'shutdown'),
    };
  }

  #presenceOf(device: FakeDevice): Presence {
    const override = this.#presenceOverride.get(device.id);
    if (override !== undefined) return override;
    const elapsed = this.#clock.now() - this.#startedAt;
    let current: Presence = device.presence ?? { present: true };
    for (const step of device.presenceTimeline) {
      if (step.atMs <= elapsed) {
        current =
          step.present || step.reason === undefined
            ? { present: true }
            : { present: false, reason: step.reason };
      }
    }
    return current;
  }

  #requireVirtual(device: DriverDevice, action: string): void {
    if (device.physical) throw new DriverError(`fake: cannot ${action} physical ${device.id}`);
    if (!this.#allDevices().some((candidate) => candidate.id === device.id)) {
      throw new DriverError(`fake: no device ${device.id}`);
    }
  }
}
