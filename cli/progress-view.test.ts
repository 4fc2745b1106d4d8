import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GrantProgress, LeaseRequestObject } from '../api/index.js';
import { workerDisplay } from './format/requests.js';
import { RecordingIO } from './io.js';
import { ProgressView } from './progress-view.js';

const START = Date.parse('2026-03-01T12:00:00Z');

function waiting(reason: 'drained' | 'busy'): LeaseRequestObject {
  return {
    metadata: { name: 'r1', creationTimestamp: new Date(START).toISOString() },
    spec: { platform: 'ios', waitTimeoutSeconds: 300, durationSeconds: 3600 },
    status: {
      phase: 'Waiting',
      position: 1,
      queuedAt: new Date(START).toISOString(),
      workers: [{ worker: 'mac-a', reason }],
    },
  };
}

const labels = workerDisplay([
  { metadata: { name: 'mac-a' }, spec: { drained: false, label: 'wrk_a' } },
]);

afterEach(() => {
  vi.useRealTimers();
});

describe('the waiting display', () => {
  it('off a terminal, prints the block again only when more than the time changes', () => {
    let now = START;
    const io = new RecordingIO({ now: () => now });
    const view = new ProgressView(io, labels);
    view.start();
    view.update(waiting('drained'));
    now += 5000;
    view.update(waiting('drained'));
    view.update(waiting('busy'));
    view.finish();
    expect(io.stderr).toEqual([
      'Request r1: queued at 1, waiting 0s',
      '  wrk_a: drained',
      'Request r1: queued at 1, waiting 5s',
      '  wrk_a: busy with its own queue',
    ]);
  });

  it('on a terminal, redraws in place every second and erases itself at the end', () => {
    vi.useFakeTimers({ now: START });
    const io = new RecordingIO({ now: () => Date.now(), tty: true, columns: 80 });
    const view = new ProgressView(io, labels);
    view.start();
    view.update(waiting('drained'));
    vi.advanceTimersByTime(2000);
    view.finish();
    vi.advanceTimersByTime(5000);
    expect(io.stderr).toEqual([
      'Request r1: queued at 1, waiting 0s\n  wrk_a: drained\n',
      '\x1b[2F\x1b[JRequest r1: queued at 1, waiting 1s\n  wrk_a: drained\n',
      '\x1b[2F\x1b[JRequest r1: queued at 1, waiting 2s\n  wrk_a: drained\n',
      '\x1b[2F\x1b[J',
    ]);
  });

  it('off a terminal, prints a line for each stage of making and booting the device', () => {
    let now = START;
    const io = new RecordingIO({ now: () => now });
    const view = new ProgressView(io, labels);
    const dispatched = (progress?: GrantProgress): LeaseRequestObject => ({
      metadata: { name: 'r1', creationTimestamp: new Date(START).toISOString() },
      spec: { platform: 'ios', model: 'iPhone 16', waitTimeoutSeconds: 300, durationSeconds: 3600 },
      status: {
        phase: 'Dispatched',
        worker: 'mac-a',
        queuedAt: new Date(START).toISOString(),
        ...(progress ? { progress } : {}),
      },
    });
    const since = new Date(START).toISOString();
    view.update(dispatched());
    now += 1000;
    view.update(dispatched({ stage: 'provisioning', since, estimatedSeconds: 40 }));
    now += 20_000;
    view.update(dispatched({ stage: 'provisioning', since, estimatedSeconds: 40 }));
    now += 21_000;
    view.update(dispatched({ stage: 'booting', since, estimatedSeconds: 25 }));
    view.finish();
    expect(io.stderr).toEqual([
      'Request r1: dispatched to wrk_a, waiting 0s',
      'Request r1: provisioning iPhone 16 on wrk_a (about 40 s), waiting 1s',
      'Request r1: booting iPhone 16 on wrk_a (about 25 s), waiting 42s',
    ]);
  });
});
