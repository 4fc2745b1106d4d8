import { describe, expect, it } from 'vitest';
import { aWorker, drained, IPHONE, platformFull } from '../../test/fixtures/routing.js';
import { aLease, aLeaseRequest, aWorkerObject } from '../../test/fixtures/objects.js';
import { LeaseObject } from '../lease-schema.js';
import { LeaseRequestObject, type WorkerReasonItem } from '../lease-request-schema.js';
import { WorkerObject } from '../worker-schema.js';
import type { WorkerView } from './types.js';
import { answerWhy, whyViews } from './why.js';

const NOW = Date.parse('2026-12-04T10:00:00Z');

function workerObject(view: WorkerView): WorkerObject {
  const worker = aWorkerObject(view.name).drained(view.drained);
  return WorkerObject.parse(view.status ? worker.status(view.status).obj() : worker.obj());
}

function waitingRequest(workers: WorkerReasonItem[]): LeaseRequestObject {
  return LeaseRequestObject.parse(
    aLeaseRequest('r1')
      .namespace('ci')
      .ios(IPHONE)
      .waitTimeout(300)
      .duration(3600)
      .status({ phase: 'Waiting', workers })
      .obj(),
  );
}

function grantedLease(worker: string, minutes: number): LeaseObject {
  return LeaseObject.parse(
    aLease('held')
      .namespace('other')
      .worker(worker)
      .device({ platform: 'ios', model: IPHONE })
      .expiresAt(new Date(NOW + minutes * 60_000).toISOString())
      .status({ phase: 'Granted' })
      .obj(),
  );
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
