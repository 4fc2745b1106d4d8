// Running limits and RAM budgets from the machine, for a host whose config sets none (ADR 0021).
// A simulator or emulator wants about two cores to boot and run UI tests without starving its
// neighbours, and its RAM; the host keeps a quarter of its memory (at least 4 GiB) for itself and
// the build tools beside the devices. Explicit `limits` in the config always win. A model's RAM
// cost is, in this order: the config's `limits.modelRamMb`, what its booted devices were measured
// to use on this host (model-ram.ts), the platform's default.
import { availableParallelism, totalmem } from 'node:os';
import type { Platform } from '../api/index.js';
import { Limits } from './config.js';
import type { MeasuredModel } from './model-ram.js';

export interface MachineFigures {
  cores: number;
  memoryMb: number;
}

/** This machine's figures. */
export function readMachine(): MachineFigures {
  return { cores: availableParallelism(), memoryMb: Math.floor(totalmem() / (1024 * 1024)) };
}

/** RAM a running device costs, before anything better is known: an iOS simulator, an emulator. */
export const DERIVED_RAM_PER_DEVICE_MB: Record<Platform, number> = { ios: 2048, android: 3072 };
const CORES_PER_DEVICE = 2;
const MIN_HOST_RESERVE_MB = 4096;
const HOST_RESERVE_SHARE = 0.25;

export interface DerivedLimits {
  limits: Limits;
  /** For the Worker's view: "derived from 10 cores, 32 GiB: …". */
  basis: string;
}

function gib(megabytes: number): string {
  const value = megabytes / 1024;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} GiB`;
}

/** The longest `basis` the Worker's `status.limitsBasis` takes. */
const MAX_BASIS = 256;

/** The config's model costs, then the measured ones for models it does not name (any case). */
export function modelRamCosts(
  configured: Readonly<Record<string, number>>,
  measured: readonly MeasuredModel[],
): Record<string, number> {
  const named = new Set(Object.keys(configured).map((model) => model.toLowerCase()));
  const costs: Record<string, number> = { ...configured };
  for (const { model, mb } of measured) {
    if (named.has(model.toLowerCase())) continue;
    named.add(model.toLowerCase());
    costs[model] = mb;
  }
  return costs;
}

/**
 * `basis` followed by the measured models it uses, as many as fit in the Worker's field:
 * "…; RAM per device: iPhone 17 2.1 GiB measured (median of 5), +2 more measured".
 */
function withMeasuredBasis(
  basis: string,
  configured: Readonly<Record<string, number>>,
  measured: readonly MeasuredModel[],
): string {
  const named = new Set(Object.keys(configured).map((model) => model.toLowerCase()));
  const used = measured.filter((entry) => !named.has(entry.model.toLowerCase()));
  if (used.length === 0) return basis.slice(0, MAX_BASIS);
  let text = `${basis}; RAM per device:`;
  for (const [index, entry] of used.entries()) {
    const how = entry.samples === 1 ? 'the last one' : `median of ${entry.samples}`;
    const part = `${index === 0 ? ' ' : ', '}${entry.model} ${gib(entry.mb)} measured (${how})`;
    const rest = used.length - index - 1;
    const more = rest > 0 ? `, +${rest} more measured` : '';
    if (text.length + part.length + more.length > MAX_BASIS) {
      const left = `${index === 0 ? ' ' : ', '}+${used.length - index} more measured`;
      return (text + left).slice(0, MAX_BASIS);
    }
    text += part;
  }
  return text;
}

/** The config's limits, with measured costs for the models its `modelRamMb` does not name. */
export function configuredLimits(
  limits: Limits,
  measured: readonly MeasuredModel[] = [],
): DerivedLimits {
  return {
    limits: { ...limits, modelRamMb: modelRamCosts(limits.modelRamMb, measured) },
    basis: withMeasuredBasis('set in the agent config', limits.modelRamMb, measured),
  };
}

export function deriveLimits(
  machine: MachineFigures,
  platforms: readonly Platform[],
  measured: readonly MeasuredModel[] = [],
): DerivedLimits {
  const cores = Math.max(1, Math.floor(machine.cores));
  const memoryMb = Math.max(0, Math.floor(machine.memoryMb));
  const reserveMb = Math.max(MIN_HOST_RESERVE_MB, Math.round(memoryMb * HOST_RESERVE_SHARE));
  const budgetMb = Math.max(0, memoryMb - reserveMb);
  const byCores = Math.max(1, Math.floor(cores / CORES_PER_DEVICE));
  const runningFor = (ramPerDeviceMb: number): number =>
    Math.max(1, Math.min(byCores, Math.floor(budgetMb / ramPerDeviceMb)));

  const served = platforms.length > 0 ? platforms : (['ios'] as const);
  // The running count by RAM is for the cheapest device known on the platform: a model measured
  // below the default lets more run; the planner's RAM check still costs each model its own.
  const cheapest = (platform: Platform): number =>
    Math.min(
      DERIVED_RAM_PER_DEVICE_MB[platform],
      ...measured.filter((entry) => entry.platform === platform).map((entry) => entry.mb),
    );
  const platformLimits: Limits['platforms'] = {};
  for (const platform of served) {
    const ramPerDeviceMb = DERIVED_RAM_PER_DEVICE_MB[platform];
    platformLimits[platform] = {
      running: runningFor(cheapest(platform)),
      // At least one device fits, even on a machine below the reserve: the limit says one.
      ramBudgetMb: Math.max(budgetMb, ramPerDeviceMb),
      ramPerDeviceMb,
    };
  }
  // Together the platforms share the budget: the global limit counts the costlier platform.
  const running = runningFor(Math.max(...served.map(cheapest)));
  const modelRamMb = modelRamCosts({}, measured);
  const limits = Limits.parse({ running, platforms: platformLimits, modelRamMb });
  const basis =
    `derived from ${cores} ${cores === 1 ? 'core' : 'cores'}, ${gib(memoryMb)}: ${running} running, ` +
    `${gib(Math.max(budgetMb, 0))} for devices`;
  return { limits, basis: withMeasuredBasis(basis, {}, measured) };
}
