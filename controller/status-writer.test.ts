// The status writer's timing for a waiting request: a position that moved waits for the
// reason-write interval and goes in the progress lane; a worker that went away (or came back) is
// written at once, in the presence lane ahead of position updates, even while the write queue is
// busy with grants. A request's first reasons still wait (a request granted within a moment is
// written once).
import { describe, expect, it } from 'vitest';
import type { WorkerReason } from '../api/index.js';
import { ManualClock, silentLogger, type KubeClient } from '../runtime/index.js';
import { ControllerMetrics } from './metrics.js';
import { StatusWriter } from './status-writer.js';
import { desiredStatus } from './status.js';
import { trackRequest, type RequestTimer, type TrackedRequest } from './tracked-request.js';
import { WriteQueue } from './write-queue.js';

const SPEC = {
  platform: 'ios',
  model: 'iPad Pro',
  holder: 'test',
  durationSeconds: 600,
  waitTimeoutSeconds: 600,
} as TrackedRequest['spec'];

function setUp() {
  const clock = new ManualClock();
  const written: { name: string; status: Record<string, unknown> }[] = [];
  const pending: (() => void)[] = [];
  // Status writes are PUTs of the status onto the version last seen (ADR 0014).
  let version = 1;
  const client = {
    replace: (path: string, body: { status: Record<string, unknown> }) => {
      written.push({ name: path.split('/').at(-2) ?? '', status: body.status });
      version += 1;
      return Promise.resolve({ metadata: { resourceVersion: String(version) } });
    },
  } as unknown as KubeClient;
  const writes = new WriteQueue({ concurrency: 1 });
  const timers = new Map<string, Partial<Record<RequestTimer, number>>>();
  const writer = new StatusWriter({
    client,
    lookup: () => ({ metadata: { name: 'request', resourceVersion: String(version) } }),
    writes,
    clock,
    log: silentLogger,
    metrics: new ControllerMetrics(),
    reasonWriteIntervalMs: 1000,
    labelOf: () => undefined,
    writable: () => true,
    setTimer: (request, which, at) => {
      request.timers[which] = at;
      timers.set(request.key, request.timers);
    },
    clearTimer: (request, which) => {
      request.timers[which] = undefined;
    },
    retry: () => undefined,
    succeeded: () => undefined,
    requeued: () => undefined,
  });
  /** A grant's write that holds the queue's one slot until `release()` (a busy controller). */
  const busy = () =>
    void writes.run('dispatch', () => new Promise<void>((resolve) => pending.push(resolve)));
  const release = async () => {
    pending.shift()?.();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { clock, writer, writes, written, busy, release };
}

/** A request Waiting at `position` with these reasons, written as such a moment ago. */
function waitingRequest(clock: ManualClock, name: string, workers: WorkerReason[], position = 1) {
  const request = trackRequest({
    key: `ns/${name}`,
    namespace: 'ns',
    name,
    uid: name,
    spec: SPEC,
    createdAt: clock.now(),
    status: undefined,
  });
  request.phase = 'Waiting';
  request.queuedAt = clock.now();
  request.position = position;
  request.workers = workers;
  request.written = desiredStatus(request);
  request.lastReasonWriteAt = clock.now();
  return request;
}

const full = (worker: string): WorkerReason => ({ worker, reason: 'full' });
const away = (worker: string): WorkerReason => ({ worker, reason: 'disconnected' });

describe('StatusWriter, a waiting request', () => {
  it('writes a position that moved once the interval is over, behind the rest', () => {
    const { clock, writer, writes, written } = setUp();
    const request = waitingRequest(clock, 'a', [full('w1'), full('w2')], 2);
    clock.advance(100);
    request.position = 1;
    writer.flush(request);
    expect(written).toEqual([]);
    expect(request.timers.write).toBe(clock.now() + 900);
    expect(writes.depth.progress).toBe(0);
  });

  it('writes a worker that went away at once, ahead of position updates, while grants keep the queue busy', async () => {
    const { clock, writer, writes, written, busy, release } = setUp();
    const moved = waitingRequest(clock, 'moved', [full('w1'), full('w2')], 3);
    const other = waitingRequest(clock, 'other', [full('w1'), full('w2')], 2);
    busy();
    // Due long ago: a position update waits for its turn in the progress lane.
    clock.advance(5000);
    moved.position = 2;
    writer.flush(moved);
    expect(writes.depth.progress).toBe(1);
    // Then w2's heartbeat lapses: the other request's reasons say so 100 ms after its last write.
    other.lastReasonWriteAt = clock.now() - 100;
    other.workers = [full('w1'), away('w2')];
    writer.flush(other);
    expect(writes.depth.presence).toBe(1);
    expect(other.timers.write).toBeUndefined();
    await release();
    expect(written.map((write) => write.name)).toEqual(['other', 'moved']);
    expect(written[0]?.status.workers).toEqual([full('w1'), away('w2')]);
  });

  it('writes a worker that came back at once as well', async () => {
    const { clock, writer, written, release } = setUp();
    const request = waitingRequest(clock, 'back', [full('w1'), away('w2')]);
    clock.advance(10);
    request.workers = [full('w1'), { worker: 'w2', reason: 'not-chosen' }];
    writer.flush(request);
    await release();
    expect(written.map((write) => write.status.workers)).toEqual([request.workers]);
    expect(request.timers.write).toBeUndefined();
  });

  it('lets a request’s first reasons settle, even when a worker in them is away', () => {
    const { clock, writer, written } = setUp();
    const request = waitingRequest(clock, 'new', []);
    request.written = { phase: 'Pending' };
    request.settleUntil = clock.now() + 1000;
    request.workers = [full('w1'), away('w2')];
    writer.flush(request);
    expect(written).toEqual([]);
    expect(request.timers.write).toBe(clock.now() + 1000);
  });
});
