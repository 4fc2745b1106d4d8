// The agent's limits and where they come from (the Worker's `limitsBasis`): the config's, or
// derived from the machine's cores and memory (ADR 0021), with each model's RAM cost taken from
// what its booted devices were measured to use. Apart from core.ts because it is one job with its
// own state: the limits are a single object the granter and the quarantine retrier hold, and a
// new measurement replaces its fields in place.
import type { Platform } from '../api/index.js';
import type { Clock, Logger } from '../runtime/index.js';
import type { AgentConfig, Limits } from './config.js';
import {
  configuredLimits,
  deriveLimits,
  type DerivedLimits,
  type MachineFigures,
} from './machine-limits.js';
import { DeviceRamSampler, type DeviceRamSamplerOptions, type ModelRam } from './model-ram.js';
import type { PlannedDevice } from './planner.js';

export interface AgentLimitsOptions {
  /** The config's limits; without them, they are derived from the machine. */
  configured: AgentConfig['limits'];
  machine: MachineFigures;
  /** The platforms the drivers serve now (a fake driver's script may change them). */
  platforms: () => readonly Platform[];
  clock: Clock;
  /** Measures the booted devices' RAM per model; without it, the figures stay fixed. */
  deviceRam?: Omit<DeviceRamSamplerOptions, 'clock'> | undefined;
  logger: Logger;
}

export class AgentLimits {
  /** The limits now: the same object for the agent's life, its fields replaced in place. */
  readonly current: Limits;
  #basis: string;
  readonly #options: AgentLimitsOptions;
  readonly #ramSampler: DeviceRamSampler | undefined;
  readonly #modelRam: ModelRam | undefined;

  constructor(options: AgentLimitsOptions) {
    this.#options = options;
    this.#modelRam = options.deviceRam?.models;
    this.#ramSampler =
      options.deviceRam && new DeviceRamSampler({ ...options.deviceRam, clock: options.clock });
    const resolved = this.#resolve();
    this.current = { ...resolved.limits };
    this.#basis = resolved.basis;
  }

  /** Where the limits come from, in words (the Worker's `limitsBasis`). */
  get basis(): string {
    return this.#basis;
  }

  /**
   * Measures the booted devices' RAM (at most once a minute) and applies new medians. True when
   * the limits were worked out again (the view should be published).
   */
  async sampleDeviceRam(devices: () => readonly PlannedDevice[]): Promise<boolean> {
    if (this.#ramSampler === undefined) return false;
    try {
      if (!(await this.#ramSampler.sample(devices()))) return false;
    } catch (error) {
      this.#options.logger.warn("reading the devices' memory failed", {
        error: (error as Error).message,
      });
      return false;
    }
    const { limits, basis } = this.#resolve();
    Object.assign(this.current, limits);
    this.#basis = basis;
    return true;
  }

  #resolve(): DerivedLimits {
    const measured = this.#modelRam?.measured() ?? [];
    const { configured, machine, platforms } = this.#options;
    return configured !== undefined
      ? configuredLimits(configured, measured)
      : deriveLimits(machine, platforms(), measured);
  }
}
