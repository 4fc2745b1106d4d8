// Where the soak's CPU goes: every process the benchmark started (its descendants, however deep:
// agents inside a network namespace run under `ip netns exec`), grouped by role, from
// /proc/<pid>/stat. Sampled every few seconds; a process keeps its last sample after it exits, so a
// leader SIGKILLed every two minutes still counts what it used.
import { readdir, readFile } from 'node:fs/promises';

export type CpuRole =
  | 'kube-apiserver'
  | 'etcd'
  | 'kube-controller-manager'
  | 'controllers'
  | 'proxy'
  | 'agents'
  | 'soak (load and watch)'
  | 'other';

/** USER_HZ on Linux: /proc's CPU times are in these ticks. */
const TICKS_PER_SECOND = 100;

/** The role of a process from its command line (arguments split on NUL). */
export function roleOf(argv: readonly string[], isSelf: boolean): CpuRole {
  if (isSelf) return 'soak (load and watch)';
  const program = argv[0] ?? '';
  if (program.endsWith('kube-apiserver')) return 'kube-apiserver';
  if (program.endsWith('kube-controller-manager')) return 'kube-controller-manager';
  if (program.endsWith('etcd')) return 'etcd';
  const launched = argv.findIndex((arg) => arg.endsWith('launch.mjs'));
  const component = launched >= 0 ? argv[launched + 1] : undefined;
  if (component === 'controller') return 'controllers';
  if (component === 'proxy') return 'proxy';
  if (component === 'agent') return 'agents';
  return 'other';
}

/** Parent pid and CPU seconds (user + system) from a /proc/<pid>/stat line. */
export function parseStat(stat: string): { parent: number; seconds: number } | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  // After "pid (comm) ": state, ppid, … utime is field 14, stime field 15 (1-based, from pid).
  const fields = stat.slice(close + 2).split(' ');
  const parent = Number(fields[1]);
  const seconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  return Number.isFinite(parent) && Number.isFinite(seconds) ? { parent, seconds } : undefined;
}

export class CpuSampler {
  /** Each process seen: its role and its CPU seconds at the last sample. */
  private readonly seen = new Map<number, { role: CpuRole; seconds: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly root = process.pid) {}

  start(everyMs = 5000): void {
    void this.sample();
    this.timer = setInterval(() => void this.sample(), everyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sample();
  }

  /** CPU seconds by role so far. */
  totals(): Map<CpuRole, number> {
    const totals = new Map<CpuRole, number>();
    for (const { role, seconds } of this.seen.values())
      totals.set(role, (totals.get(role) ?? 0) + seconds);
    return totals;
  }

  async sample(): Promise<void> {
    const stats = new Map<number, { parent: number; seconds: number }>();
    for (const entry of await readdir('/proc').catch(() => [] as string[])) {
      const pid = Number(entry);
      if (!Number.isInteger(pid)) continue;
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
      const parsed = stat === undefined ? undefined : parseStat(stat);
      if (parsed) stats.set(pid, parsed);
    }
    const descends = (pid: number): boolean => {
      for (let at = pid, hops = 0; at > 1 && hops < 64; hops++) {
        if (at === this.root) return true;
        at = stats.get(at)?.parent ?? 0;
      }
      return false;
    };
    for (const [pid, { seconds }] of stats) {
      if (!descends(pid)) continue;
      const known = this.seen.get(pid);
      if (known) {
        known.seconds = seconds;
        continue;
      }
      const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8')
        .then((text) => text.split('\0'))
        .catch(() => undefined);
      if (argv) this.seen.set(pid, { role: roleOf(argv, pid === this.root), seconds });
    }
  }
}
