// Exec activity for idle reclaim: how often it is written, and what the record says, on a clock
// moved by hand. The write to the Lease itself is tested against a real API server in
// proxy/activity.cluster.test.ts, and idle reclaim end to end in e2e/exec-end.test.ts.
import { describe, expect, it } from 'vitest';
import { KubeApiError, ManualClock, silentLogger } from '../runtime/index.js';
import { ActivityRecorder, type ActivityRecord, type ActivityStore } from './activity.js';

const INTERVAL = 30_000;
const HORIZON = 45_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Lets the write's promise and what follows it run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
}

interface Write {
  at: number;
  lease: string;
  record: ActivityRecord;
  expected?: ActivityRecord;
}

/**
 * A recorder whose writes answer as told, in turn ('ok' when none is left); `current` is what a
 * read of the Lease finds (another replica's record, when a write is superseded).
 */
function recorder(
  answers: ('ok' | 'fail' | 'gone' | 'superseded')[] = [],
  current: () => ActivityRecord | undefined = () => undefined,
) {
  const clock = new ManualClock(0);
  const writes: Write[] = [];
  const reads: number[] = [];
  const store: ActivityStore = {
    write: (namespace, name, record, expected) => {
      writes.push({
        at: clock.now(),
        lease: `${namespace}/${name}`,
        record,
        ...(expected ? { expected } : {}),
      });
      const answer = answers.shift() ?? 'ok';
      if (answer === 'fail') return Promise.reject(new Error('connection reset'));
      if (answer === 'gone')
        return Promise.reject(new KubeApiError(404, 'NotFound', 'gone', { details: { name } }));
      return Promise.resolve(answer === 'superseded' ? 'superseded' : 'written');
    },
    read: () => {
      reads.push(clock.now());
      return Promise.resolve(current());
    },
  };
  const activity = new ActivityRecorder({
    clock,
    log: silentLogger,
    intervalMs: INTERVAL,
    horizonMs: HORIZON,
    store,
  });
  const advance = async (ms: number) => {
    clock.advance(ms);
    await settle();
  };
  return { clock, writes, reads, activity, advance };
}

describe('exec activity', () => {
  it('writes at the start of an exec, saying an exec runs until the horizon', async () => {
    const { writes, activity, advance } = recorder();
    activity.started('team-a', 'lease-1');
    await advance(0);
    expect(writes).toEqual([
      {
        at: 0,
        lease: 'team-a/lease-1',
        record: { lastExecAt: iso(0), runningUntil: iso(HORIZON) },
      },
    ]);
  });

  it('writes the end of an exec at the next turn: idle counts from the end, not the horizon', async () => {
    const { writes, activity, advance } = recorder();
    const ended = activity.started('team-a', 'lease-1');
    await advance(0);
    await advance(10_000);
    ended();
    await advance(INTERVAL);
    // Within an interval of the end, the record says it ended at 10 s, in place of our own.
    expect(writes.map(({ at, record, expected }) => ({ at, record, expected }))).toEqual([
      { at: 0, record: { lastExecAt: iso(0), runningUntil: iso(HORIZON) }, expected: undefined },
      {
        at: INTERVAL,
        record: { lastExecAt: iso(10_000), runningUntil: iso(10_000) },
        expected: { lastExecAt: iso(0), runningUntil: iso(HORIZON) },
      },
    ]);
    await advance(10 * INTERVAL);
    expect(writes).toHaveLength(2);
  });

  it('writes once per interval however many execs start, never once per exec', async () => {
    const { writes, activity, advance } = recorder();
    for (let exec = 0; exec < 50; exec++) {
      const ended = activity.started('team-a', 'lease-1');
      await advance(0);
      await advance(250);
      ended();
      await advance(250);
    }
    // 25 s of short execs: the first write, and none until the interval has passed.
    expect(writes.map((write) => write.at)).toEqual([0]);
    await advance(INTERVAL);
    expect(writes.map((write) => write.at)).toEqual([0, INTERVAL]);
    // The second says the last exec ended at 24.75 s.
    expect(writes[1]?.record).toEqual({ lastExecAt: iso(24_750), runningUntil: iso(24_750) });
  });

  it('counts an exec that ended before its write: written, then its end, never lost', async () => {
    const { writes, activity, advance } = recorder();
    activity.started('team-a', 'lease-1')();
    await advance(0);
    expect(writes).toHaveLength(1);
    await advance(10_000);
    // A 2 s exec 10 s after the last write, over before the interval is up.
    const ended = activity.started('team-a', 'lease-1');
    await advance(2000);
    ended();
    await advance(INTERVAL);
    expect(writes.map((write) => write.record.lastExecAt)).toEqual([iso(0), iso(12_000)]);
    await advance(10 * INTERVAL);
    expect(writes).toHaveLength(2);
  });

  it('renews while an exec runs, so that the record always reaches past the present', async () => {
    const { writes, activity, advance } = recorder();
    const ended = activity.started('team-a', 'lease-1');
    await advance(0);
    for (let second = 0; second < 100; second++) {
      await advance(1000);
      const last = writes.at(-1);
      expect(Date.parse(last?.record.runningUntil ?? '')).toBeGreaterThan(second * 1000 + 1000);
    }
    ended();
    const renewals = writes.length;
    await advance(10 * INTERVAL);
    // Then one write: the end, at 100 s.
    expect(writes.length).toBe(renewals + 1);
    expect(writes.at(-1)?.record).toEqual({ lastExecAt: iso(100_000), runningUntil: iso(100_000) });
  });

  it('writes an exec that starts after its end was written at once: no record of ours covers it', async () => {
    const { writes, activity, advance } = recorder();
    activity.started('team-a', 'lease-1')();
    await advance(0);
    await advance(INTERVAL);
    expect(writes).toHaveLength(2);
    await advance(1000);
    activity.started('team-a', 'lease-1');
    await advance(0);
    expect(writes.at(-1)).toMatchObject({
      at: INTERVAL + 1000,
      record: { lastExecAt: iso(INTERVAL + 1000), runningUntil: iso(INTERVAL + 1000 + HORIZON) },
    });
  });

  it('leaves another replica’s running record alone, and writes its end over an earlier end', async () => {
    // Another replica's exec runs (its record reaches to 80 s), and later ends at 5 s after ours
    // started: then our end, at 20 s, is the last one.
    let theirs: ActivityRecord = { lastExecAt: iso(20_000), runningUntil: iso(80_000) };
    const { writes, reads, activity, advance } = recorder(['ok', 'superseded'], () => theirs);
    const ended = activity.started('team-a', 'lease-1');
    await advance(0);
    await advance(20_000);
    ended();
    await advance(10_000);
    // Our end finds their record: left alone, looked at again a turn later.
    expect(writes.map((write) => write.at)).toEqual([0, INTERVAL]);
    expect(reads).toEqual([INTERVAL]);
    theirs = { lastExecAt: iso(5000), runningUntil: iso(5000) };
    await advance(INTERVAL);
    expect(writes.at(-1)).toEqual({
      at: 2 * INTERVAL,
      lease: 'team-a/lease-1',
      record: { lastExecAt: iso(20_000), runningUntil: iso(20_000) },
      expected: theirs,
    });
    await advance(10 * INTERVAL);
    expect(writes).toHaveLength(3);
  });

  it('drops its end when a later end, or a horizon past it, is there already', async () => {
    for (const theirs of [
      { lastExecAt: iso(25_000), runningUntil: iso(25_000) },
      { lastExecAt: iso(1000), runningUntil: iso(1000 + HORIZON) },
    ]) {
      const { writes, activity, advance } = recorder(['ok', 'superseded'], () => theirs);
      const ended = activity.started('team-a', 'lease-1');
      await advance(0);
      await advance(20_000);
      ended();
      await advance(10 * INTERVAL);
      expect(writes).toHaveLength(2);
    }
  });

  it('keeps each lease apart', async () => {
    const { writes, activity, advance } = recorder();
    activity.started('team-a', 'lease-1');
    activity.started('team-b', 'lease-1');
    await advance(0);
    expect(writes.map((write) => write.lease).sort()).toEqual(['team-a/lease-1', 'team-b/lease-1']);
  });

  it('tries a failed write again a second later while the exec runs', async () => {
    const { writes, activity, advance } = recorder(['fail', 'ok']);
    activity.started('team-a', 'lease-1');
    await advance(0);
    await advance(1000);
    expect(writes.map((write) => write.at)).toEqual([0, 1000]);
  });

  it('tries a failed end again, still in place of its own record', async () => {
    const { writes, activity, advance } = recorder(['ok', 'fail', 'ok']);
    activity.started('team-a', 'lease-1')();
    await advance(0);
    await advance(INTERVAL);
    await advance(1000);
    expect(writes.map((write) => write.at)).toEqual([0, INTERVAL, INTERVAL + 1000]);
    expect(writes[2]?.expected).toEqual(writes[0]?.record);
  });

  it('stops writing for a Lease that is gone', async () => {
    const { writes, activity, advance } = recorder(['gone']);
    activity.started('team-a', 'lease-1');
    await advance(0);
    await advance(5 * INTERVAL);
    expect(writes).toHaveLength(1);
  });
});

/** A tiny deterministic PRNG (mulberry32), so a failing run can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

describe('exec activity with several proxy replicas on one Lease', () => {
  it('never leaves a running exec uncovered, and ends on the last exec’s end', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const next = random(seed);
      const clock = new ManualClock(0);
      // The Lease's status.activity, with the JSON patch's `test` as the API server applies it.
      let stored: ActivityRecord | undefined;
      const store: ActivityStore = {
        write: (_namespace, _name, record, expected) => {
          if (
            expected &&
            (stored?.lastExecAt !== expected.lastExecAt ||
              stored.runningUntil !== expected.runningUntil)
          )
            return Promise.resolve('superseded');
          stored = record;
          return Promise.resolve('written');
        },
        read: () => Promise.resolve(stored),
      };
      const replicas = [0, 1, 2].map(
        () =>
          new ActivityRecorder({
            clock,
            log: silentLogger,
            intervalMs: INTERVAL,
            horizonMs: HORIZON,
            store,
          }),
      );
      const running: { replica: number; endsAt: number; ended: () => void }[] = [];
      let lastEnd = 0;
      let uncoveredAt: number | undefined;
      for (let step = 0; step < 3000; step++) {
        const now = clock.now();
        for (const exec of running.filter((exec) => exec.endsAt <= now)) {
          exec.ended();
          lastEnd = now;
          running.splice(running.indexOf(exec), 1);
        }
        // Now and then an exec starts on one of the replicas: from a moment to two minutes long.
        if (next() < 0.02) {
          const replica = Math.floor(next() * replicas.length);
          const ended = replicas[replica]?.started('team-a', 'lease-1') ?? (() => undefined);
          running.push({ replica, endsAt: now + 100 + Math.floor(next() * 120_000), ended });
        }
        clock.advance(500);
        await settle();
        // The first moment an exec ran uncovered, asserted once a seed: expect() at each of the
        // 3000 steps made the test twice as slow (it timed out on a loaded machine).
        if (running.length > 0 && uncoveredAt === undefined) {
          const covered = Date.parse(stored?.runningUntil ?? '');
          if (!(covered > clock.now())) uncoveredAt = clock.now();
        }
      }
      expect(uncoveredAt, `seed ${seed}: an exec ran uncovered at ${uncoveredAt}`).toBeUndefined();
      for (const exec of running) exec.ended();
      if (running.length > 0) lastEnd = clock.now();
      clock.advance(2 * INTERVAL);
      await settle();
      clock.advance(2 * INTERVAL);
      await settle();
      // Once all have ended, within two intervals the record says so: idle counts from the end.
      expect(stored, `seed ${seed}`).toEqual({
        lastExecAt: iso(lastEnd),
        runningUntil: iso(lastEnd),
      });
    }
  });
});
