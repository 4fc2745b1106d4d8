// The one skeleton every side runs: a warm-up item outside the count, the clock started, N items
// created C at a time through one client, the wait until they are done, and the side's writes and
// CPU counted. A side file sets its stage up and says only what differs: what an item is, when it
// is done, which writes are its own, and what it adds to the result.
import type { ChildProcess } from 'node:child_process';
import { inParallel, waitUntil } from '../harness/index.js';
import {
  endOfSide,
  idleCost,
  sideResult,
  startOfSide,
  type SideContext,
  type SideEnd,
  type SideResult,
  type SideStart,
} from './measure.js';

/** The items done so far, by name (a Set of names will do). */
export interface DoneItems {
  readonly size: number;
  has(name: string): boolean;
  clear(): void;
}

export interface Side {
  /** The items are named `${item}-${index}`. */
  item: string;
  /** Creates one item (the benchmark's own writes, left out of the side's). */
  create: (name: string) => Promise<void>;
  done: DoneItems;
  /** What the wait is for, as a timeout names it ('every pod bound'). */
  what: string;
  /** Items that will not move on, done or failed: the side ends when there are N (default: done). */
  settled?: () => number;
  /**
   * Ready means it works: an item named `warm-up` first, outside the count, waited for while the
   * processes (by name) run, then forgotten.
   */
  warmUp?: { processes: Record<string, ChildProcess>; what: string; timeoutMs?: number };
  /** Which writes, by "VERB resource", are the side's (those of the watched resources). */
  keep: (key: string) => boolean;
  /** The creates an item takes, by "POST resource": left out of the side's writes. */
  creates: string[];
  /** How long the writes that trail the last item are given to land, counted (default 1.5 s). */
  tailMs?: number;
  /** Just before the clock starts (the clients' own counters). */
  beforeClock?: () => Promise<void>;
  /** As the clock starts (a profile of the API server while the side runs). */
  clockStarted?: (start: SideStart) => void;
  /** After the clock stops: what the side adds to its result. */
  extra?: (end: SideEnd, start: SideStart) => Promise<Partial<SideResult>>;
  /** Takes the side's stage down, whether it finished or failed. */
  stop: () => Promise<void>;
}

export async function runSide(context: SideContext, side: Side): Promise<SideResult> {
  const { admin } = context.cluster;
  const { size, options } = context;
  try {
    if (side.warmUp) await warmUp(side, side.warmUp);
    const idle = options.idleSeconds > 0 ? await idleCost(admin, options.idleSeconds) : undefined;
    await side.beforeClock?.();
    const start = await startOfSide(admin);
    side.clockStarted?.(start);
    const names = Array.from({ length: size.requests }, (_, index) => `${side.item}-${index}`);
    await inParallel(names, options.concurrency, side.create);
    const settled = side.settled ?? (() => side.done.size);
    const end = await endOfSide(admin, start, {
      done: () => settled() >= size.requests,
      what: side.what,
      timeoutMs: options.sideTimeoutMs,
      keep: side.keep,
      creates: Object.fromEntries(side.creates.map((key) => [key, size.requests])),
      tailMs: side.tailMs,
    });
    const extra = await side.extra?.(end, start);
    return sideResult(end, side.done.size, size.requests, { ...extra, ...(idle ? { idle } : {}) });
  } finally {
    await side.stop();
  }
}

async function warmUp(side: Side, warmUp: NonNullable<Side['warmUp']>): Promise<void> {
  await side.create('warm-up');
  await waitForProcesses(
    warmUp.processes,
    () => side.done.has('warm-up'),
    warmUp.what,
    warmUp.timeoutMs,
  );
  side.done.clear();
}

/** Waits until `ready` holds, failing at once if a process it waits on has exited. */
export async function waitForProcesses(
  processes: Record<string, ChildProcess>,
  ready: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  await waitUntil(
    () => {
      for (const [name, child] of Object.entries(processes))
        if (child.exitCode !== null) throw new Error(`${name} exited; see its log`);
      return ready();
    },
    timeoutMs,
    what,
  );
}
