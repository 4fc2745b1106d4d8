import { describe, expect, it } from 'vitest';
import type { DeviceSpec } from '../api/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { grantedIphone } from '../test/fixtures/objects.js';
import type { GrantOutcome } from './granter.js';
import { LocalQueue, type LocalRequest } from './local-queue.js';
import type { AgentRefusal } from './planner.js';

const ios: DeviceSpec = { platform: 'ios', model: 'iPhone 16' };
const android: DeviceSpec = { platform: 'android' };

function grantedOutcome(request: LocalRequest): GrantOutcome {
  return {
    kind: 'granted',
    lease: {
      leaseId: request.id,
      origin: 'local',
      source: 'warm',
      grantedAtMs: 0,
      device: grantedIphone({ id: `device-for-${request.id}`, platform: request.spec.platform }),
    },
  };
}

/** A grant that has `free` devices per platform and refuses with `refusal` once they are gone. */
function stubGrant(
  free: Record<string, number>,
  refusal: AgentRefusal = {
    code: 'NO_CAPACITY',
    capacityReason: 'platform-running-limit',
    message: 'full',
  },
) {
  const asked: string[] = [];
  const grant = (request: LocalRequest): Promise<GrantOutcome> => {
    asked.push(request.id);
    const left = free[request.spec.platform] ?? 0;
    if (left > 0) {
      free[request.spec.platform] = left - 1;
      return Promise.resolve(grantedOutcome(request));
    }
    return Promise.resolve({ kind: 'refused', refusal });
  };
  return { grant, asked, free };
}

function newQueue(clock = new FakeClock()) {
  return new LocalQueue({ clock, maxEntries: 100 });
}

describe('the local queue', () => {
  it('serves requests first in, first out', async () => {
    const queue = newQueue();
    const first = queue.enqueue({ id: 'first', spec: ios });
    const second = queue.enqueue({ id: 'second', spec: ios });
    const stub = stubGrant({ ios: 1 });
    await queue.serve(stub.grant);
    expect(await first.outcome).toMatchObject({ kind: 'granted' });
    expect(queue.entries().map((entry) => entry.request.id)).toEqual(['second']);
    stub.free.ios = 1;
    await queue.serve(stub.grant);
    expect(await second.outcome).toMatchObject({ kind: 'granted' });
  });

  it('gives the head its capacity reason and the requests behind it in the same line busy', async () => {
    const queue = newQueue();
    queue.enqueue({ id: 'head', spec: ios, holder: 'local-agent' });
    queue.enqueue({ id: 'behind', spec: { platform: 'ios', model: 'iPhone 15' } });
    const stub = stubGrant({});
    await queue.serve(stub.grant);
    expect(stub.asked).toEqual(['head']);
    expect(queue.viewEntries()).toEqual([
      {
        id: 'head',
        holder: 'local-agent',
        platform: 'ios',
        model: 'iPhone 16',
        queuedAt: '2025-01-01T00:00:00.000Z',
        reason: 'full',
        capacityReason: 'platform-running-limit',
      },
      {
        id: 'behind',
        platform: 'ios',
        model: 'iPhone 15',
        queuedAt: '2025-01-01T00:00:00.000Z',
        reason: 'busy',
      },
    ]);
  });

  it('does not hold one platform behind another', async () => {
    const queue = newQueue();
    queue.enqueue({ id: 'ios', spec: ios });
    const androidEntry = queue.enqueue({ id: 'android', spec: android });
    await queue.serve(stubGrant({ android: 1 }).grant);
    expect(await androidEntry.outcome).toMatchObject({ kind: 'granted' });
    expect(queue.queueDepth).toBe(1);
  });

  it('shows no-free-physical for a physical request refused without a capacity reason', async () => {
    const queue = newQueue();
    queue.enqueue({ id: 'phone', spec: { platform: 'ios', physical: true } });
    await queue.serve(stubGrant({}, { code: 'NO_CAPACITY', message: 'all leased' }).grant);
    expect(queue.viewEntries()[0]).toMatchObject({ reason: 'no-free-physical', physical: true });
    expect(queue.physicalQueueDepth).toBe(1);
    expect(queue.queueDepth).toBe(0);
  });

  it('fails at once a request this host can never serve, with the refusal code', async () => {
    const queue = newQueue();
    const entry = queue.enqueue({ id: 'x', spec: { platform: 'ios', model: 'iPhone 3G' } });
    await queue.serve(stubGrant({}, { code: 'UNKNOWN_MODEL', message: 'no such model' }).grant);
    expect(await entry.outcome).toEqual({
      kind: 'failed',
      error: { code: 'UNKNOWN_MODEL', message: 'no such model' },
    });
    expect(queue.entries()).toHaveLength(0);
  });

  it('fails a no-wait request with NO_CAPACITY instead of keeping it', async () => {
    const queue = newQueue();
    const entry = queue.enqueue({ id: 'x', spec: ios, noWait: true });
    await queue.serve(stubGrant({}).grant);
    expect(await entry.outcome).toMatchObject({ kind: 'failed', error: { code: 'NO_CAPACITY' } });
  });

  it('fails a request with TIMEOUT once it has waited its wait timeout', async () => {
    const clock = new FakeClock();
    const queue = newQueue(clock);
    const entry = queue.enqueue({ id: 'x', spec: ios, waitTimeoutMs: 5000 });
    await queue.serve(stubGrant({}).grant);
    await clock.advance(4999);
    expect(queue.entries()).toHaveLength(1);
    await clock.advance(1);
    expect(await entry.outcome).toMatchObject({ kind: 'failed', error: { code: 'TIMEOUT' } });
  });

  it('withdraws a cancelled request', async () => {
    const queue = newQueue();
    const entry = queue.enqueue({ id: 'x', spec: ios });
    expect(queue.cancel('x')).toBe(true);
    expect(await entry.outcome).toMatchObject({ kind: 'failed', error: { code: 'WITHDRAWN' } });
    expect(queue.cancel('x')).toBe(false);
  });

  it('lists at most 50 entries in the view, and counts them all', () => {
    const queue = newQueue();
    for (let index = 0; index < 60; index++) queue.enqueue({ id: `r${index}`, spec: ios });
    expect(queue.viewEntries()).toHaveLength(50);
    expect(queue.queueDepth).toBe(60);
  });

  it('refuses a duplicate id and a full queue', () => {
    const queue = new LocalQueue({ clock: new FakeClock(), maxEntries: 1 });
    queue.enqueue({ id: 'x', spec: ios });
    expect(() => queue.enqueue({ id: 'x', spec: ios })).toThrow(/already queued/);
    expect(() => queue.enqueue({ id: 'y', spec: ios })).toThrow(/full/);
  });

  it('folds calls made during a pass into one more pass', async () => {
    const queue = newQueue();
    queue.enqueue({ id: 'x', spec: ios });
    const stub = stubGrant({});
    const first = queue.serve(stub.grant);
    const second = queue.serve(stub.grant);
    const third = queue.serve(stub.grant);
    await Promise.all([first, second, third]);
    expect(stub.asked).toEqual(['x', 'x']);
  });

  it('tells its listeners when entries change', async () => {
    const queue = newQueue();
    let changes = 0;
    queue.changes.add(() => changes++);
    queue.enqueue({ id: 'x', spec: ios });
    await queue.serve(stubGrant({ ios: 1 }).grant);
    expect(changes).toBe(2);
  });
});
