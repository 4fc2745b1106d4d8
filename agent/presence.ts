// The presence watcher (DESIGN.md §5, §3.3): every probeIntervalMs it reads each physical
// device's presence. Every presence read goes through `read` (the watcher's and the grant's), which
// keeps the latest answer per device for the view; a read that fails leaves the last one as it was.
import { canonicalJson, type Presence } from '../api/index.js';
import type { DriverDevice } from './drivers/driver.js';
import { silentLogger, type Clock, type Logger, type TimerHandle } from '../runtime/index.js';
import { Listeners } from './listeners.js';

export interface PresenceWatcherOptions {
  clock: Clock;
  probeIntervalMs: number;
  readPresence: (device: DriverDevice) => Promise<Presence>;
  /** The physical devices to read, asked afresh each round. */
  physicalDevices: () => readonly DriverDevice[];
  logger?: Logger;
}

export interface PresenceChange {
  deviceId: string;
  presence: Presence;
}

export class PresenceWatcher {
  readonly changes = new Listeners<PresenceChange>();
  readonly #options: PresenceWatcherOptions;
  readonly #logger: Logger;
  readonly #latest = new Map<string, Presence>();
  #timer: TimerHandle | undefined;
  #round: Promise<void> | undefined;
  #roundDue = false;
  #running = false;

  constructor(options: PresenceWatcherOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger;
  }

  /** The latest read of a device; none before its first read. */
  latest(deviceId: string): Presence | undefined {
    return this.#latest.get(deviceId);
  }

  /** Reads one device now and records the answer; `undefined` when the read failed. */
  async read(device: DriverDevice): Promise<Presence | undefined> {
    let presence: Presence;
    try {
      presence = await this.#options.readPresence(device);
    } catch (error) {
      this.#logger.warn('presence read failed; keeping the last read', {
        device: device.id,
        error: (error as Error).message,
      });
      return undefined;
    }
    const previous = this.#latest.get(device.id);
    this.#latest.set(device.id, presence);
    if (previous === undefined || canonicalJson(previous) !== canonicalJson(presence)) {
      this.changes.emit({ deviceId: device.id, presence });
    }
    return presence;
  }

  /** Forgets a device that is gone for good (removed from the host). */
  forget(deviceId: string): void {
    this.#latest.delete(deviceId);
  }

  /** Reads every physical device now, then every probeIntervalMs. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#tick();
  }

  stop(): void {
    this.#running = false;
    if (this.#timer !== undefined) this.#options.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Resolves when the round in progress (if any) has finished. */
  async idle(): Promise<void> {
    while (this.#round !== undefined) await this.#round;
  }

  #tick(): void {
    if (!this.#running) return;
    // The next round is due one interval after this one starts, so a change is seen within one
    // interval; a round still running then is followed at once by the next.
    this.#timer = this.#options.clock.setTimeout(() => this.#tick(), this.#options.probeIntervalMs);
    if (this.#round !== undefined) {
      this.#roundDue = true;
      return;
    }
    this.#round = this.#probeAll().finally(() => {
      this.#round = undefined;
      if (this.#roundDue && this.#running) {
        this.#roundDue = false;
        this.#round = this.#probeAll().finally(() => {
          this.#round = undefined;
        });
      }
    });
  }

  async #probeAll(): Promise<void> {
    const devices = this.#options.physicalDevices().filter((device) => device.physical);
    await Promise.all(devices.map((device) => this.read(device)));
  }
}
