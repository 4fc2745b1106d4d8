import { describe, expect, it } from 'vitest';
import { aWorker, drained, IPHONE, platformFull } from '../../test/fixtures/routing.js';
import type { LeaseObject } from '../lease-schema.js';
import type { LeaseRequestObject } from '../lease-request-schema.js';
import type { WorkerObject } from '../worker-schema.js';
import type { WorkerView } from './types.js';
import { answerWhy, whyViews } from './why.js';

const NOW = Date.parse('2026-12-04T10:00:00Z');

function workerObject(view: WorkerView): WorkerObject {
  return {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'Worker',
    metadata: { name: view.name },
    spec: { drained: view.drained },
    ...(view.status ? { status: view.status } : {}),
  };
}

function waitingRequest(workers: { worker: string; reason: string }[]): LeaseRequestObject {
  return {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'LeaseRequest',
    metadata: { name: 'r1', namespace: 'ci' },
    spec: { platform: 'ios', model: IPHONE, waitTimeoutSeconds: 300, durationSeconds: 3600 },
    status: { phase: 'Waiting', workers },
  } as LeaseRequestObject;
}

function grantedLease(worker: string, minutes: number): LeaseObject {
  return {
    apiVersion: 'simlock.dev/v1alpha1',
    kind: 'Lease',
    metadata: { name: 'held', namespace: 'other' },
    spec: {
      worker,
      device: { platform: 'ios', model: IPHONE },
      expiresAt: new Date(NOW + minutes * 60_000).toISOString(),
    },
    status: { phase: 'Granted' },
  };
}

describe('why over the objects a person reads', () => {
  it('answers the changes as lines, the lease ending first', () => {
    const workers = [aWorker('worker-a', platformFull('ios')), aWorker('worker-b', drained)];
    const request = waitingRequest([
      { worker: 'worker-a', reason: 'full' },
      { worker: 'worker-b', reason: 'drained' },
    ]);
    const answer = answerWhy(
      request,
      workers.map(workerObject),
      [grantedLease('worker-a', 4)],
      NOW,
    );
    expect(answer.lines).toEqual([
      'a lease on worker-a ends in 4m',
      'undrain worker-b',
      'worker-a is at its iOS running limit (4 of 4); a higher limit would let it run',
    ]);
  });

  it('takes only the workers the request names, connected as its reasons say', () => {
    const request = waitingRequest([{ worker: 'worker-b', reason: 'disconnected' }]);
    const views = whyViews(request, [aWorker('worker-a'), aWorker('worker-b')].map(workerObject));
    expect(views.map((view) => [view.name, view.connection])).toEqual([
      ['worker-b', 'disconnected'],
    ]);
    // A disconnected worker is not offered anything; the other is not the controller's.
    expect(answerWhy(request, [aWorker('worker-b')].map(workerObject), [], NOW).verdict).toEqual({
      kind: 'nothing-helps',
    });
  });

  it('says it cannot tell when none of its workers could be read', () => {
    const request = waitingRequest([{ worker: 'worker-a', reason: 'drained' }]);
    const answer = answerWhy(request, [], [], NOW);
    expect(answer.verdict).toBeUndefined();
    expect(answer.lines).toEqual([
      'cannot tell what would unblock it: its workers could not be read',
    ]);
  });

  it('a request that is not waiting has nothing to unblock', () => {
    const request = { ...waitingRequest([]), status: { phase: 'Granted' } } as LeaseRequestObject;
    const answer = answerWhy(request, [], [], NOW);
    expect(answer.verdict).toBeUndefined();
    expect(answer.lines).toEqual(['it is Granted, not waiting: there is nothing to unblock']);
  });
});
