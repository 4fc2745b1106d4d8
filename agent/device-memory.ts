// What a booted simulator or emulator uses in RAM, read from the host's process table (ADR 0021):
// one `ps` for all devices, parsed and bounded (a line that does not parse is skipped), then per
// device the resident memory summed over its process tree.
//   - An iOS simulator runs under its own `launchd_sim`, started with the device's bootstrap plist
//     (`<device set>/<UDID>/data/var/run/launchd_bootstrap.plist`): the tree under the
//     `launchd_sim` whose command line holds `/<UDID>/`.
//   - An Android emulator is the `emulator` launcher and its `qemu-system-*` process, started with
//     `-avd <name>` (the adb driver's device id is the AVD name): the tree under the outermost of
//     those whose command line holds `-avd <name>` as whole words.
import type { Platform } from '../api/index.js';
import type { CommandRunner } from './drivers/command.js';

export interface ProcessRow {
  pid: number;
  ppid: number;
  rssKiB: number;
  command: string;
}

/** Every process, its parent, its resident set in KiB and its command line; no header. */
export const PS_ARGV = ['ps', '-ww', '-ax', '-o', 'pid=,ppid=,rss=,command='] as const;

const MAX_ROWS = 50_000;
const MAX_COMMAND = 8_192;
const MAX_PID = 2 ** 31 - 1;
/** 1 TiB in KiB: beyond that a figure is not a process's memory. */
const MAX_RSS_KIB = 2 ** 30;
const ROW = /^\s*(\d{1,10})\s+(\d{1,10})\s+(\d{1,13})\s+(\S.*)$/;

/** Parses `ps -o pid=,ppid=,rss=,command=` (macOS and Linux procps print the same columns). */
export function parseProcessTable(text: string): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const line of text.split('\n')) {
    if (rows.length >= MAX_ROWS) break;
    const match = ROW.exec(line.length > MAX_COMMAND ? line.slice(0, MAX_COMMAND) : line);
    if (match === null) continue;
    const pid = Number(match[1]);
    const ppid = Number(match[2]);
    const rssKiB = Number(match[3]);
    if (pid > MAX_PID || ppid > MAX_PID || rssKiB > MAX_RSS_KIB) continue;
    rows.push({ pid, ppid, rssKiB, command: match[4]!.trimEnd() });
  }
  return rows;
}

/** A booted virtual device to measure: its id is a simulator's UDID or an emulator's AVD name. */
export interface MeasuredDevice {
  id: string;
  platform: Platform;
}

const UDID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const AVD_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const LAUNCHD_SIM = /(^|\/)launchd_sim(\s|$)/;
const EMULATOR = /(^|\/)(emulator|qemu-system-[A-Za-z0-9_]+)(\s|$)/;

function isDeviceRoot(row: ProcessRow, device: MeasuredDevice): boolean {
  if (device.platform === 'ios') {
    if (!UDID.test(device.id) || !LAUNCHD_SIM.test(row.command)) return false;
    return row.command.toUpperCase().includes(`/${device.id.toUpperCase()}/`);
  }
  if (!AVD_NAME.test(device.id) || !EMULATOR.test(row.command)) return false;
  const words = row.command.split(/\s+/);
  return words.some(
    (word, index) =>
      (word === '-avd' && words[index + 1] === device.id) || word === `@${device.id}`,
  );
}

/**
 * The resident memory of `device`'s process tree in MiB, or undefined when none of its processes
 * is in the table (not booted, or booted by a tool this reading does not know).
 */
export function deviceResidentMb(
  rows: readonly ProcessRow[],
  device: MeasuredDevice,
): number | undefined {
  const children = new Map<number, ProcessRow[]>();
  for (const row of rows) {
    const siblings = children.get(row.ppid);
    if (siblings === undefined) children.set(row.ppid, [row]);
    else siblings.push(row);
  }
  const roots = rows.filter((row) => isDeviceRoot(row, device));
  if (roots.length === 0) return undefined;
  // Each process once, even when a launcher and its qemu child both match.
  const seen = new Set<number>();
  let totalKiB = 0;
  const pending = [...roots];
  while (pending.length > 0) {
    const row = pending.pop()!;
    if (seen.has(row.pid)) continue;
    seen.add(row.pid);
    totalKiB += row.rssKiB;
    for (const child of children.get(row.pid) ?? []) {
      // pid 0 and a process listed as its own parent would loop.
      if (child.pid !== row.pid) pending.push(child);
    }
  }
  return Math.round(totalKiB / 1024);
}

/** Reads the process table once; rejects when `ps` cannot run or fails. */
export async function readProcessTable(run: CommandRunner): Promise<ProcessRow[]> {
  const result = await run(PS_ARGV, { timeoutMs: 10_000 });
  if (result.exitCode !== 0) {
    throw new Error(`ps exited with ${result.exitCode}: ${result.stderr.trim().slice(0, 200)}`);
  }
  return parseProcessTable(result.stdout);
}
