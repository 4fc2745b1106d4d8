// A waiting request shows a worker that went away within moments of its heartbeat lapsing, however
// recently its reasons were written: a change of presence is not held back by the reason-write
// interval that coalesces position updates (status.ts, presencePart; write-queue.ts). On the code
// before, the reason waited out the interval (here 8 s) behind the last write.
import { describe, expect, it } from 'vitest';
import { iosFullStatus } from '../test/cluster/fleet.js';
import { useCluster } from '../test/cluster/harness.js';
import { controllerStories } from '../test/cluster/controller.js';

const cluster = useCluster('presence');
const { setup } = controllerStories(cluster);

const INTERVAL_MS = 8000;

describe('a waiting request and a worker whose heartbeat lapses', () => {
  it('reads disconnected within two seconds of the lapse, just after its reasons were written', async () => {
    const { fleet, start } = await setup({ reasonWriteIntervalMs: INTERVAL_MS });
    const a = await fleet.addWorker('a', { status: iosFullStatus() });
    const b = await fleet.addWorker('b', { status: iosFullStatus() });
    await start();
    await fleet.createRequest('r1', { platform: 'ios', model: 'iPhone 16' });
    const full = { reason: 'full', capacityReason: 'platform-running-limit' };
    await fleet.requestWhere(
      'r1',
      (request) => request.status?.phase === 'Waiting' && request.status.workers?.length === 2,
      INTERVAL_MS + 10_000,
    );
    // Its reasons were just written; a's heartbeat (2 s, renewed 1 s ago) lapses in a second.
    await fleet.heartbeat('a', { durationSeconds: 2, ageMs: 1000 });
    const lapsesAt = Date.now() + 1000;
    const request = await fleet.requestWhere(
      'r1',
      (seen) => seen.status?.workers?.[0]?.reason === 'disconnected',
      INTERVAL_MS,
    );
    expect(Date.now() - lapsesAt).toBeLessThan(2000);
    expect(request.status?.workers).toEqual([
      { worker: a, reason: 'disconnected' },
      { worker: b, ...full },
    ]);

    // And back: renewed, it is full again as soon as that is seen.
    await fleet.heartbeat('a');
    const renewedAt = Date.now();
    await fleet.requestWhere(
      'r1',
      (seen) => seen.status?.workers?.[0]?.reason === 'full',
      INTERVAL_MS,
    );
    expect(Date.now() - renewedAt).toBeLessThan(2000);
  });
});
