// The execs of each lease: a lease that ends stops them all, and its reclaim waits until they are
// gone (or the kill grace and a second more), never for the execs of another lease.
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../test/fake-clock.js';
import { RunningExecs } from './running-execs.js';

async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn++) await Promise.resolve();
}

describe('running execs', () => {
  it('stops each exec of the lease with the message, and resolves once all are gone', async () => {
    const execs = new RunningExecs({ clock: new FakeClock(), graceMs: 1000 });
    const first = execs.track('team-a/ci-1');
    const second = execs.track('team-a/ci-1');
    const other = execs.track('team-a/ci-2');
    let stopped = false;
    void execs.stopLease('team-a/ci-1', 'lease ci-1 ended').then(() => (stopped = true));
    expect(first.leaseEnded.reason).toBe('lease ci-1 ended');
    expect(second.leaseEnded.aborted).toBe(true);
    expect(other.leaseEnded.aborted).toBe(false);
    first.exited();
    await settle();
    expect(stopped).toBe(false);
    second.exited();
    await settle();
    expect(stopped).toBe(true);
    expect(execs.count('team-a/ci-1')).toBe(0);
    expect(execs.count('team-a/ci-2')).toBe(1);
  });

  it('waits no longer than the grace and a second for a process that will not go', async () => {
    const clock = new FakeClock();
    const execs = new RunningExecs({ clock, graceMs: 1000 });
    execs.track('team-a/ci-1');
    let stopped = false;
    void execs.stopLease('team-a/ci-1', 'lease ci-1 ended').then(() => (stopped = true));
    await clock.advance(1999);
    expect(stopped).toBe(false);
    await clock.advance(1);
    await settle();
    expect(stopped).toBe(true);
  });

  it('answers at once for a lease with nothing running', async () => {
    const execs = new RunningExecs({ clock: new FakeClock() });
    const done = execs.track('team-a/ci-1');
    done.exited();
    await expect(execs.stopLease('team-a/ci-1', 'ended')).resolves.toBeUndefined();
  });
});
