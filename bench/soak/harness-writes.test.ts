// The soak's own writes are tried until they succeed, and one given up is the harness's failure,
// said so, never swallowed.
import { describe, expect, it } from 'vitest';
import { KubeApiError, KubeUnavailableError, ManualClock } from '../../runtime/index.js';
import { HarnessError, HarnessWrites } from './harness-writes.js';

const refused = (status: number, reason: string, details?: { name: string }) =>
  new KubeApiError(status, reason, reason, details ? { details } : {});
const unreachable = () =>
  new KubeUnavailableError('DELETE /apis/simlock.dev: connect ECONNREFUSED', {
    cause: new Error('ECONNREFUSED'),
  });

/** Moves the clock from timer to timer until `promise` settles (the writes' backoff). */
async function runOut<T>(clock: ManualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined);
  for (let turns = 0; !settled && turns < 1000; turns++) {
    await new Promise((resolve) => setImmediate(resolve));
    clock.advance(1000);
  }
  return watched;
}

/** A write whose tries answer, in turn, the errors given, then succeed. */
function flaky(errors: Error[]) {
  const tries: boolean[] = [];
  return {
    tries,
    attempt: (retry: boolean) => {
      tries.push(retry);
      const error = errors[tries.length - 1];
      return error === undefined ? Promise.resolve('done') : Promise.reject(error);
    },
  };
}

describe('HarnessWrites', () => {
  it('tries a write again while kube-apiserver restarts, until it succeeds', async () => {
    const clock = new ManualClock();
    const writes = new HarnessWrites({ clock, random: () => 0 });
    const write = flaky([unreachable(), refused(503, 'ServiceUnavailable'), unreachable()]);
    await expect(runOut(clock, writes.write('delete keep-0', write.attempt))).resolves.toBe('done');
    expect(write.tries).toEqual([false, true, true, true]);
    expect(writes.retries).toBe(3);
    expect(writes.failures).toEqual([]);
  });

  it('tries again a 404 that names no object (the resource not served yet after a restart)', async () => {
    const clock = new ManualClock();
    const writes = new HarnessWrites({ clock, random: () => 0 });
    const write = flaky([refused(404, 'NotFound')]);
    await expect(runOut(clock, writes.write('create r-1', write.attempt))).resolves.toBe('done');
    expect(write.tries).toHaveLength(2);
  });

  it('gives up at its deadline and reports it as the harness failure', async () => {
    const clock = new ManualClock();
    const writes = new HarnessWrites({ clock, random: () => 0, deadlineMs: 60_000 });
    const start = clock.now();
    const write = flaky(Array.from({ length: 100 }, unreachable));
    const outcome = runOut(clock, writes.write('delete keep-0', write.attempt));
    await expect(outcome).rejects.toBeInstanceOf(HarnessError);
    await expect(outcome).rejects.toThrow(/^delete keep-0: DELETE .*ECONNREFUSED \(\d+ tries in/);
    expect(clock.now() - start).toBeLessThanOrEqual(61_000);
    expect(write.tries.length).toBeGreaterThan(5);
    expect(writes.failures).toHaveLength(1);
    expect(writes.failures[0]).toMatch(/^delete keep-0: /);
  });

  it('does not try again what the API server refuses for good (an invalid object, a named 404)', async () => {
    const clock = new ManualClock();
    const writes = new HarnessWrites({ clock });
    for (const error of [
      refused(422, 'Invalid'),
      refused(404, 'NotFound', { name: 'keep-0' }),
      refused(409, 'AlreadyExists', { name: 'r-1' }),
    ]) {
      const write = flaky([error]);
      await expect(writes.write('write', write.attempt)).rejects.toBeInstanceOf(HarnessError);
      expect(write.tries).toEqual([false]);
    }
    expect(writes.failures).toHaveLength(3);
    expect(writes.retries).toBe(0);
  });

  it('records a fault the harness could not make as its own failure', () => {
    const writes = new HarnessWrites();
    const error = writes.failed('restart etcd', new Error('kube-apiserver not ready within 90 s'));
    expect(error).toBeInstanceOf(HarnessError);
    expect(writes.failures).toEqual(['restart etcd: kube-apiserver not ready within 90 s']);
  });
});
