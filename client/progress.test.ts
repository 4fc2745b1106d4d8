import { describe, expect, it } from 'vitest';
import type { LeaseRequestObject, WorkerObject } from '../api/index.js';
import { progressLine, progressOf, workerLabels } from './progress.js';

const workers = [
  { metadata: { name: 'w-1' }, spec: { drained: false, label: 'worker-a' } },
  { metadata: { name: 'w-2' }, spec: { drained: false, label: '' } },
] as WorkerObject[];

function request(status: LeaseRequestObject['status']): LeaseRequestObject {
  return {
    metadata: { name: 'lease-x' },
    spec: { platform: 'ios', waitTimeoutSeconds: 300, durationSeconds: 3600 },
    status,
  };
}

describe('progressOf', () => {
  it('gives the place and each worker’s reason by label, in the contract’s words', () => {
    const progress = progressOf(
      request({
        phase: 'Waiting',
        position: 2,
        workers: [
          { worker: 'w-1', reason: 'full', capacityReason: 'platform-running-limit' },
          { worker: 'w-2', reason: 'drained' },
        ],
      }),
      workerLabels(workers),
    );
    expect(progress).toEqual({
      request: 'lease-x',
      phase: 'Waiting',
      position: 2,
      workers: [
        {
          worker: 'w-1',
          label: 'worker-a',
          reason: 'full',
          capacityReason: 'platform-running-limit',
          text: 'Full: running limit for iOS',
        },
        { worker: 'w-2', label: 'w-2', reason: 'drained', text: 'Drained' },
      ],
    });
    expect(progressLine(progress)).toBe(
      'lease-x queued at 2: worker-a: Full: running limit for iOS; w-2: Drained',
    );
    // The same reasons grouped, as the controller writes them (ADR 0033): the same progress.
    const grouped = request({
      phase: 'Waiting',
      position: 2,
      workers: [
        { reason: 'drained', names: ['w-2'] },
        { reason: 'full', capacityReason: 'platform-running-limit', names: ['w-1'] },
      ],
    });
    expect(progressOf(grouped, workerLabels(workers))).toEqual(progress);
  });

  it("carries the controller's estimate, in its words and as people read it", () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    const progress = progressOf(
      request({
        phase: 'Waiting',
        position: 1,
        workers: [],
        estimate: { grantAt: '2026-01-01T12:00:40Z', basis: '1 lease of iPhone 16 ends before' },
      }),
      workerLabels(workers),
      now,
    );
    expect(progress).toMatchObject({
      estimatedGrantAt: '2026-01-01T12:00:40Z',
      estimateBasis: '1 lease of iPhone 16 ends before',
      estimateText: 'about 40s (1 lease of iPhone 16 ends before)',
    });
    expect(progressLine(progress)).toBe(
      'lease-x queued at 1, about 40s (1 lease of iPhone 16 ends before)',
    );
    const none = progressOf(
      request({ phase: 'Waiting', workers: [], estimate: { basis: 'no basis: nothing busy' } }),
      workerLabels(workers),
      now,
    );
    expect(none.estimatedGrantAt).toBeUndefined();
    expect(none.estimateText).toBe('no estimate: nothing busy');
  });

  it('names the worker once dispatched, and has no reasons then', () => {
    const progress = progressOf(
      request({ phase: 'Dispatched', worker: 'w-1', workers: [{ worker: 'w-1', reason: 'busy' }] }),
      workerLabels(workers),
    );
    expect(progress).toEqual({
      request: 'lease-x',
      phase: 'Dispatched',
      worker: 'worker-a',
      workers: [],
    });
    expect(progressLine(progress)).toBe('lease-x dispatched to worker-a');
    expect(progressLine(progressOf(request(undefined), workerLabels([])))).toBe('lease-x pending');
  });
});

describe('progressOf while the worker makes or boots the device', () => {
  const progress = {
    stage: 'booting' as const,
    since: '2026-12-01T12:00:41Z',
    estimatedSeconds: 25,
    basis: 'median of 5 on this host',
  };

  it('carries the stage, since when, the estimate, and says it in one line', () => {
    const dispatched = request({ phase: 'Dispatched', worker: 'w-1', progress });
    dispatched.spec.model = 'iPhone 16';
    const seen = progressOf(dispatched, workerLabels(workers));
    expect(seen).toEqual({
      request: 'lease-x',
      phase: 'Dispatched',
      worker: 'worker-a',
      workers: [],
      stage: 'booting',
      stageSince: '2026-12-01T12:00:41Z',
      estimatedSeconds: 25,
      stageText: 'booting iPhone 16 on worker-a, about 25 s',
    });
    expect(progressLine(seen)).toBe('lease-x booting iPhone 16 on worker-a, about 25 s');
  });

  it('names what was asked when no model was, and leaves out an estimate the agent did not give', () => {
    const { estimatedSeconds: _none, ...noEstimate } = progress;
    const seen = progressOf(
      request({
        phase: 'Dispatched',
        worker: 'w-2',
        progress: { ...noEstimate, stage: 'provisioning' },
      }),
      workerLabels(workers),
    );
    expect(seen.estimatedSeconds).toBeUndefined();
    expect(progressLine(seen)).toBe('lease-x provisioning an iOS phone on w-2');
  });

  it('has no stage once the request is granted', () => {
    const seen = progressOf(
      request({ phase: 'Granted', worker: 'w-1', progress }),
      workerLabels(workers),
    );
    expect(seen.stage).toBeUndefined();
  });
});
