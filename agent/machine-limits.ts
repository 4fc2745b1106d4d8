// Running limits and RAM budgets from the machine, for a host whose config sets none (ADR 0021).
// A simulator or emulator wants about two cores to boot and run UI tests without starving its
// neighbours, and its RAM; the host keeps a quarter of its memory (at least 4 GiB) for itself and
// the build tools beside the devices. Explicit `limits` in the config always win.
import { availableParallelism, totalmem } from 'node:os';
import type { Platform } from '../api/index.js';
import { Limits } from './config.js';

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

export function deriveLimits(
  machine: MachineFigures,
  platforms: readonly Platform[],
): DerivedLimits {
  const cores = Math.max(1, Math.floor(machine.cores));
  const memoryMb = Math.max(0, Math.floor(machine.memoryMb));
  const reserveMb = Math.max(MIN_HOST_RESERVE_MB, Math.round(memoryMb * HOST_RESERVE_SHARE));
  const budgetMb = Math.max(0, memoryMb - reserveMb);
  const byCores = Math.max(1, Math.floor(cores / CORES_PER_DEVICE));
  const runningFor = (ramPerDeviceMb: number): number =>
    Math.max(1, Math.min(byCores, Math.floor(budgetMb / ramPerDeviceMb)));

  const served = platforms.length > 0 ? platforms : (['ios'] as const);
  const platformLimits: Limits['platforms'] = {};
  for (const platform of served) {
    const ramPerDeviceMb = DERIVED_RAM_PER_DEVICE_MB[platform];
    platformLimits[platform] = {
      running: runningFor(ramPerDeviceMb),
      // At least one device fits, even on a machine below the reserve: the limit says one.
      ramBudgetMb: Math.max(budgetMb, ramPerDeviceMb),
      ramPerDeviceMb,
    };
  }
  // Together the platforms share the budget: the global limit counts the costlier device.
  const running = runningFor(
    Math.max(...served.map((platform) => DERIVED_RAM_PER_DEVICE_MB[platform])),
  );
  const limits = Limits.parse({ running, platforms: platformLimits });
  const basis =
    `derived from ${cores} ${cores === 1 ? 'core' : 'cores'}, ${gib(memoryMb)}: ${running} running, ` +
    `${gib(Math.max(budgetMb, 0))} for devices`;
  return { limits, basis };
}
