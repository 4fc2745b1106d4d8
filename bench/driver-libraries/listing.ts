// What one device listing costs, counted the same way for our drivers and the libraries: the
// processes started (every call a stand-in logs is one process) and the adb-server connections
// opened, on a first listing (nothing cached) and on the listings after it, with the median time
// of those. The stand-ins are the drivers' own (test/stand-ins/stand-in.ts): small Node
// programs that answer with the recorded outputs, so a process here costs a Node start, more than
// adb's own client and less than `xcrun simctl`; the counts, not the milliseconds, carry over to
// a real host.
import { performance } from 'node:perf_hooks';
import type { StandIns } from '../../test/index.js';
import { median } from '../harness/index.js';

export interface ListingFigures {
  name: string;
  /** What the listing returns, in a few words. */
  covers: string;
  first: { processes: number; connections: number };
  after: { processes: number; connections: number };
  medianMs: number;
  /** The argv of every process a listing after the first started, in order. */
  calls: string[];
}

export interface Counter {
  /** Forgets what was counted so far. */
  reset(): Promise<void>;
  /** Processes started and their argv (tool name first), connections opened, since the reset. */
  read(): Promise<{ calls: string[]; connections: number }>;
}

/** Counts the stand-ins' calls (one process each) and a fake adb server's connections. */
export function counter(
  standIns: StandIns,
  tools: readonly string[],
  connections: { count: () => number; reset: () => void } = { count: () => 0, reset: () => {} },
): Counter {
  return {
    async reset() {
      for (const tool of tools) await standIns.clearCalls(tool);
      connections.reset();
    },
    async read() {
      const calls: string[] = [];
      for (const tool of tools) {
        for (const argv of await standIns.calls(tool)) calls.push([tool, ...argv].join(' '));
      }
      return { calls, connections: connections.count() };
    },
  };
}

/** One listing with nothing cached, then `runs` more: counts and the median time of those. */
export async function measureListing(
  name: string,
  covers: string,
  count: Counter,
  list: () => Promise<unknown>,
  runs: number,
): Promise<ListingFigures> {
  await count.reset();
  await list();
  const first = await count.read();
  const times: number[] = [];
  let after = first;
  for (let run = 0; run < runs; run++) {
    await count.reset();
    const began = performance.now();
    await list();
    times.push(performance.now() - began);
    after = await count.read();
  }
  return {
    name,
    covers,
    first: { processes: first.calls.length, connections: first.connections },
    after: { processes: after.calls.length, connections: after.connections },
    medianMs: median(times),
    calls: after.calls,
  };
}

/** Runs `body` with PATH led by the stand-ins: node-simctl looks xcrun up on the process's PATH. */
export async function withPath<T>(dir: string, body: () => Promise<T>): Promise<T> {
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved ?? ''}`;
  try {
    return await body();
  } finally {
    process.env.PATH = saved;
  }
}

/** Which ids two parsers found, and where they differ. */
export interface ParseComparison {
  name: string;
  ours: string[];
  theirs: string[];
  onlyOurs: string[];
  onlyTheirs: string[];
  /** Fields each found per id, for the ones that differ or matter. */
  notes: string[];
}

export function compareIds(
  name: string,
  ours: readonly string[],
  theirs: readonly string[],
  notes: string[],
): ParseComparison {
  return {
    name,
    ours: [...ours],
    theirs: [...theirs],
    onlyOurs: ours.filter((id) => !theirs.includes(id)),
    onlyTheirs: theirs.filter((id) => !ours.includes(id)),
    notes,
  };
}
