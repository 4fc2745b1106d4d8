// The figures of the status-write benchmark from its measurements: medians over runs per workload
// and variant, with the run-to-run spread, and what the CEL rules cost (generated against the
// variants without them), paired run by run, since the variants of a run met the same machine.
import { median } from '../harness/index.js';
import type { Measurement } from './workload.js';

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface Row {
  workload: string;
  variant: string;
  runs: number;
  apiserverCpuMsPerWrite: Spread;
  etcdCpuMsPerWrite: number;
  writesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  refused: Record<string, number>;
  bodyBytes: number;
  storedBytes: number;
  loadAverage: number;
}

export interface RuleCost {
  workload: string;
  /** The variant generated is compared against. */
  without: string;
  /** generated − without, kube-apiserver CPU ms per write, one per run. */
  pairedMs: number[];
  ms: Spread;
  /** The median difference as a share of generated's median CPU per write. */
  share: number;
  /**
   * Every run's difference has the same sign and the median difference is larger than either
   * variant's run-to-run spread (max − min).
   */
  beyondNoise: boolean;
}

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export function rows(measurements: readonly Measurement[]): Row[] {
  const groups = new Map<string, Measurement[]>();
  for (const m of measurements) {
    const key = `${m.workload}\u0000${m.variant}`;
    groups.set(key, [...(groups.get(key) ?? []), m]);
  }
  return [...groups.values()].map((group) => {
    const first = group[0] as Measurement;
    const refused: Record<string, number> = {};
    for (const m of group)
      for (const [code, count] of Object.entries(m.refused))
        refused[code] = (refused[code] ?? 0) + count;
    const of = (pick: (m: Measurement) => number) => group.map(pick);
    return {
      workload: first.workload,
      variant: first.variant,
      runs: group.length,
      apiserverCpuMsPerWrite: spread(of((m) => m.apiserverCpuMsPerWrite)),
      etcdCpuMsPerWrite: median(of((m) => m.etcdCpuMsPerWrite)),
      writesPerSecond: median(of((m) => m.writesPerSecond)),
      p50Ms: median(of((m) => m.p50Ms)),
      p99Ms: median(of((m) => m.p99Ms)),
      refused,
      bodyBytes: first.bodyBytes,
      storedBytes: median(of((m) => m.storedBytes)),
      loadAverage: median(of((m) => m.loadAverage)),
    };
  });
}

/** generated against each other variant, per workload (pairs only where both ran in a run). */
export function ruleCosts(measurements: readonly Measurement[]): RuleCost[] {
  const byKey = new Map(measurements.map((m) => [`${m.workload}|${m.variant}|${m.run}`, m]));
  const workloads = [...new Set(measurements.map((m) => m.workload))];
  const others = [...new Set(measurements.map((m) => m.variant))].filter((v) => v !== 'generated');
  const table = rows(measurements);
  const costs: RuleCost[] = [];
  for (const workload of workloads) {
    for (const without of others) {
      const pairedMs: number[] = [];
      for (const m of measurements) {
        if (m.workload !== workload || m.variant !== 'generated') continue;
        const other = byKey.get(`${workload}|${without}|${m.run}`);
        if (other) pairedMs.push(m.apiserverCpuMsPerWrite - other.apiserverCpuMsPerWrite);
      }
      if (pairedMs.length === 0) continue;
      const row = (variant: string) =>
        table.find((r) => r.workload === workload && r.variant === variant)?.apiserverCpuMsPerWrite;
      const generated = row('generated');
      const base = row(without);
      const ms = spread(pairedMs);
      const noise = Math.max(width(generated), width(base));
      const sameSign = pairedMs.every((d) => d > 0) || pairedMs.every((d) => d < 0);
      costs.push({
        workload,
        without,
        pairedMs,
        ms,
        share: ms.median / (generated?.median ?? Number.NaN),
        beyondNoise: sameSign && Math.abs(ms.median) > noise,
      });
    }
  }
  return costs;
}

function width(value: Spread | undefined): number {
  return value ? value.max - value.min : Number.NaN;
}

/** The figures as text tables. */
export function formatTables(table: readonly Row[], costs: readonly RuleCost[]): string {
  const header = [
    'workload',
    'variant',
    'runs',
    'apiserver CPU ms/write (min–max)',
    'etcd ms/w',
    'writes/s',
    'p50 ms',
    'p99 ms',
    'refused',
    'body B',
    'stored B',
    'load1',
  ];
  const body = table.map((r) => [
    r.workload,
    r.variant,
    String(r.runs),
    `${fixed(r.apiserverCpuMsPerWrite.median)} (${fixed(r.apiserverCpuMsPerWrite.min)}–${fixed(r.apiserverCpuMsPerWrite.max)})`,
    fixed(r.etcdCpuMsPerWrite),
    r.writesPerSecond.toFixed(0),
    r.p50Ms.toFixed(1),
    r.p99Ms.toFixed(1),
    Object.entries(r.refused)
      .map(([code, count]) => `${code}×${count}`)
      .join(' ') || '0',
    String(r.bodyBytes),
    String(r.storedBytes),
    r.loadAverage.toFixed(1),
  ]);
  const costHeader = [
    'workload',
    'saved = generated −',
    'ms/write (paired runs)',
    'share of generated',
    'beyond noise',
  ];
  const costBody = costs.map((c) => [
    c.workload,
    c.without,
    `${fixed(c.ms.median)} [${c.pairedMs.map(fixed).join(', ')}]`,
    `${(c.share * 100).toFixed(1)} %`,
    c.beyondNoise ? 'yes' : 'no',
  ]);
  return `${align([header, ...body])}\n\n${align([costHeader, ...costBody])}\n`;
}

function fixed(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'n/a';
}

function align(lines: readonly string[][]): string {
  const widths = (lines[0] ?? []).map((_, column) =>
    Math.max(...lines.map((line) => (line[column] ?? '').length)),
  );
  return lines
    .map((line) =>
      line
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
