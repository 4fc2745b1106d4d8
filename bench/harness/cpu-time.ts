// CPU time of the benchmark and of what it started, read from /proc (Linux).
import { readFile } from 'node:fs/promises';

/** CPU seconds (user + system) by process: this program and its children, named by command. */
export async function cpuSeconds(): Promise<Record<string, number>> {
  const ticks = 100; // USER_HZ on Linux
  const read = async (pid: number): Promise<{ name: string; seconds: number } | undefined> => {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      const script = cmdline.find((arg) => arg.endsWith('.ts'));
      const name = script
        ? script.slice(script.lastIndexOf('/', script.lastIndexOf('/') - 1) + 1)
        : stat.slice(stat.indexOf('(') + 1, close);
      return { name, seconds: (Number(fields[11]) + Number(fields[12])) / ticks };
    } catch {
      return undefined;
    }
  };
  const children = await readFile(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .then((text) => text.trim().split(/\s+/).filter(Boolean).map(Number))
    .catch(() => [] as number[]);
  const totals: Record<string, number> = {};
  for (const pid of [process.pid, ...children]) {
    const entry = await read(pid);
    if (entry) totals[entry.name] = (totals[entry.name] ?? 0) + entry.seconds;
  }
  return totals;
}

export function cpuBetween(before: Record<string, number>, after: Record<string, number>) {
  return Object.fromEntries(
    Object.entries(after).map(([name, seconds]) => [
      name,
      Math.round((seconds - (before[name] ?? 0)) * 100) / 100,
    ]),
  );
}
