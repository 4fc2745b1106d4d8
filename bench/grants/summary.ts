// Medians of the runs, one row per size and client QPS, and the tables printed from them.
import { median } from '../harness/index.js';
import { apiserverMsPerItem, type SideResult } from './measure.js';
import { SIDES, type SideName, type Size } from './options.js';

export interface RunResult {
  size: Size;
  qps: number;
  run: number;
  sides: Partial<Record<SideName, SideResult>>;
  /** Sides that failed in this run, with the error. */
  failures?: Partial<Record<SideName, string>>;
}

export interface SideSummary {
  runs: number;
  perSecond: number;
  writesPerItem: number;
  /** kube-apiserver CPU milliseconds per item (the steadiest figure here). */
  apiserverMsPerItem: number;
  /** Runs in which not every item was done within --timeout-s. */
  unfinishedRuns: number;
  /** DRA: devices allocated to two claims at once, over all runs (must be 0). */
  doubleAllocations?: number;
  /** The machine's 1-minute load average at the end of each run's side. */
  loadAverages: number[];
}

export interface Row {
  size: Size;
  qps: number;
  sides: Partial<Record<SideName, SideSummary>>;
  /** grants/s ÷ each other side's rate. */
  ratios: Partial<Record<SideName, number>>;
}

export function summarize(
  results: readonly RunResult[],
  sizes: readonly Size[],
  qpsList: readonly number[],
): Row[] {
  const rows: Row[] = [];
  for (const size of sizes) {
    for (const qps of qpsList) {
      const mine = results.filter(
        (result) =>
          result.size.workers === size.workers &&
          result.size.requests === size.requests &&
          result.qps === qps,
      );
      const row: Row = { size, qps, sides: {}, ratios: {} };
      for (const name of SIDES) {
        const sides = mine.flatMap((result) => {
          const side = result.sides[name];
          return side ? [side] : [];
        });
        if (sides.length === 0) continue;
        const doubles = sides.map((side) => side.doubleAllocations ?? 0);
        row.sides[name] = {
          runs: sides.length,
          perSecond: median(sides.map((side) => side.perSecond)),
          writesPerItem: median(sides.map((side) => side.writesPerItem)),
          apiserverMsPerItem: median(sides.map(apiserverMsPerItem)),
          unfinishedRuns: sides.filter((side) => side.unfinished).length,
          loadAverages: sides.map((side) => Math.round((side.loadAverage ?? Number.NaN) * 10) / 10),
          ...(name.startsWith('dra')
            ? { doubleAllocations: doubles.reduce((a, b) => a + b, 0) }
            : {}),
        };
      }
      const grants = row.sides.simlock?.perSecond;
      for (const name of SIDES) {
        const other = row.sides[name]?.perSecond;
        if (name !== 'simlock' && grants !== undefined && other) row.ratios[name] = grants / other;
      }
      rows.push(row);
    }
  }
  return rows;
}

const LABELS: Record<SideName, string> = {
  simlock: 'grants',
  scheduler: 'binds',
  dra: 'DRA',
  'dra-preset-finalizer': 'DRA preset',
  kwok: 'KWOK',
  kueue: 'Kueue',
};

function cell(value: number | undefined, digits = 1, width = 12): string {
  return (value === undefined || Number.isNaN(value) ? '-' : value.toFixed(digits)).padStart(width);
}

export function printTables(rows: readonly Row[]): void {
  const present = SIDES.filter((name) => rows.some((row) => row.sides[name]));
  const others = present.filter((name) => name !== 'simlock');
  const head = (row: Row) =>
    `${`${row.size.workers}×${row.size.requests}`.padEnd(11)}${(row.qps === 0 ? 'none' : String(row.qps)).padStart(5)}`;
  const title = `${'W×N'.padEnd(11)}${'QPS'.padStart(5)}`;
  const mark = (summary: SideSummary | undefined) =>
    summary && summary.unfinishedRuns > 0 ? '*' : ' ';

  console.log('\nitems done per second (* = a run timed out: the rate of what it did)');
  console.log(`${title}${present.map((name) => `${LABELS[name]}/s`.padStart(13)).join('')}`);
  for (const row of rows)
    console.log(
      `${head(row)}${present.map((name) => `${cell(row.sides[name]?.perSecond)}${mark(row.sides[name])}`).join('')}`,
    );

  if (present.includes('simlock') && others.length > 0) {
    console.log('\ngrants/s ÷ the other side');
    console.log(`${title}${others.map((name) => `÷${LABELS[name]}`.padStart(13)).join('')}`);
    for (const row of rows)
      console.log(`${head(row)}${others.map((name) => cell(row.ratios[name], 2, 13)).join('')}`);
  }

  console.log('\nwrites per item / kube-apiserver CPU ms per item');
  console.log(`${title}${present.map((name) => LABELS[name].padStart(14)).join('')}`);
  for (const row of rows)
    console.log(
      `${head(row)}${present
        .map((name) => {
          const side = row.sides[name];
          return side
            ? `${side.writesPerItem.toFixed(2)} / ${side.apiserverMsPerItem.toFixed(1)}`.padStart(
                14,
              )
            : '-'.padStart(14);
        })
        .join('')}`,
    );

  const doubles = rows.flatMap((row) =>
    (['dra', 'dra-preset-finalizer'] as const).flatMap((name) => {
      const count = row.sides[name]?.doubleAllocations;
      return count === undefined ? [] : [count];
    }),
  );
  if (doubles.length > 0)
    console.log(`\nDRA devices allocated twice: ${doubles.reduce((a, b) => a + b, 0)}`);
}
