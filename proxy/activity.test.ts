// Exec activity for idle reclaim: how often it is written, and what the record says, on a clock
// moved by hand. The write to the Lease itself is tested against a real API server in
// e2e/lifetime.test.ts (a 10 s exec keeps a lease with a 5 s idle timeout).
import { describe, expect, it } from 'vitest';
import { KubeApiError, ManualClock, silentLogger } from '../runtime/index.js';
import { ActivityRecorder, type ActivityRecord } from './activity.js';

const INTERVAL = 30_000;
const HORIZON = 45_000;

/** Lets the write's promise and what follows it run. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
}

function recorder(answers: ('ok' | 'fail' | 'gone')[] = []) {
  const clock = new ManualClock(0);
  const writes: { at: number; lease: string; record: ActivityRecord }[] = [];
  const activity = new ActivityRecorder({
    clock,
    log: silentLogger,
    intervalMs: INTERVAL,
    horizonMs: HORIZON,
    write: (namespace, name, record) => {
      writes.push({ at: clock.now(), lease: `${namespace}/${name}`, record });
      const answer = answers.shift() ?? 'ok';
      if (answer === 'fail') return Promise.reject(new Error('connection reset'));
      if (answer === 'gone')
        return Promise.reject(new KubeApiError(404, 'NotFound', 'gone', { details: { name } }));
      return Promise.resolve();
    },
  });
  const advance = async (ms: number) => {
    clock.advance(ms);
    await settle();
  };
  return { clock, writes, activity, advance };
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
        record: {
          lastExecAt: new Date(0).toISOString(),
          runningUntil: new Date(HORIZON).toISOString(),
        },
      },
    ]);
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
    // The second says the last exec ended at 24.75 s, and counts a horizon past it.
    expect(writes[1]?.record).toEqual({
      lastExecAt: new Date(24_750).toISOString(),
      runningUntil: new Date(24_750 + HORIZON).toISOString(),
    });
  });

  it('counts an exec that ended before its write: written at its end, never lost', async () => {
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
    expect(writes.map((write) => write.record.lastExecAt)).toEqual([
      new Date(0).toISOString(),
      new Date(12_000).toISOString(),
    ]);
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
    const written = writes.length;
    await advance(10 * INTERVAL);
    // Nothing at the end: the last record lapses by itself.
    expect(writes.length).toBe(written);
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

  it('stops writing for a Lease that is gone', async () => {
    const { writes, activity, advance } = recorder(['gone']);
    activity.started('team-a', 'lease-1');
    await advance(0);
    await advance(5 * INTERVAL);
    expect(writes).toHaveLength(1);
  });
});
