// One reason per worker, whatever order the explanations come in.
import { describe, expect, it } from 'vitest';
import { iosFullStatus, iosStatus } from '../test/fixtures/workers.js';
import { emptyMemos } from './memos.js';
import { reasonsFor } from './reasons.js';
import { createRoutingPolicy, type WorkerView } from '../api/index.js';

const policy = createRoutingPolicy();
const views: WorkerView[] = [
  { name: 'a', connection: 'connected', drained: true, status: iosStatus() },
  { name: 'b', connection: 'connected', drained: false, status: iosFullStatus() },
  { name: 'c', connection: 'disconnected', drained: false, status: iosStatus() },
];
const spec = { platform: 'ios' as const, model: 'iPhone 16', runtime: 'iOS 18.2' };

describe('reasonsFor', () => {
  it('gives each worker its own explanation, also when they come in another order', () => {
    const explanations = policy.explain(spec, views);
    const inputs = {
      spec,
      views,
      viewRevisions: new Map(views.map((view) => [view.name, 1])),
      memos: emptyMemos(),
      claimedEarlier: () => false,
    };
    const inOrder = reasonsFor({ ...inputs, explanations });
    expect(inOrder.map((entry) => [entry.worker, entry.reason])).toEqual([
      ['a', 'drained'],
      ['b', 'full'],
      ['c', 'disconnected'],
    ]);
    expect(reasonsFor({ ...inputs, explanations: [...explanations].reverse() })).toEqual(inOrder);
  });
});
