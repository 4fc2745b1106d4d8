// The walk and the per-worker reasons, as pure code (DESIGN.md §3.2, §4.2).
import { describe, expect, it } from 'vitest';
import { iosCapacity, iosFullStatus, iosStatus, physicalIphone } from '../test/fixtures/workers.js';
import { viewKey, type Device, type WorkerStatus } from '../api/index.js';
import { emptyMemos, type RequestMemos } from './memos.js';
import { createRoutingPolicy, type WorkerView } from '../api/index.js';
import { ViewRevisions } from './views.js';
import { walk, type Fleet, type WaitingRequest } from './walk.js';

const policy = createRoutingPolicy();

const status = iosStatus;
const noIosSlot = iosFullStatus();
const atRamBudget = status({
  capacity: iosCapacity({ running: 1, atRamBudget: true }, { running: 1 }),
});

function iphone(id: string, overrides: Partial<Device> = {}): Device {
  return physicalIphone({ id, name: id, ...overrides });
}

function worker(
  name: string,
  workerStatus: WorkerStatus | undefined = status(),
  extra: Partial<WorkerView> = {},
): WorkerView {
  return { name, connection: 'connected', drained: false, status: workerStatus, ...extra };
}

function fleetOf(...views: WorkerView[]): Fleet {
  return fleetSeenBy(new ViewRevisions(), ...views);
}

/** The fleet as the controller sees it after `revisions` observed each view (in order, over time). */
function fleetSeenBy(revisions: ViewRevisions, ...views: WorkerView[]): Fleet {
  const sorted = [...views].sort((a, b) => a.name.localeCompare(b.name));
  return {
    views: sorted,
    viewRevisions: new Map(
      sorted.map((view) => [view.name, revisions.observe(view.name, viewKey(view.status))]),
    ),
  };
}

function waiting(
  key: string,
  spec: WaitingRequest['spec'] = { platform: 'ios' },
  memos: RequestMemos = emptyMemos(),
): WaitingRequest {
  return { key, spec, memos };
}

describe('the reasons of a waiting request', () => {
  it('lists drained and full: running limit for iOS for two workers, in name order', () => {
    const fleet = fleetOf(worker('wrk_b', noIosSlot), worker('wrk_a', status(), { drained: true }));
    expect(walk([waiting('r1')], fleet, policy).get('r1')).toEqual({
      kind: 'wait',
      workers: [
        { worker: 'wrk_a', reason: 'drained' },
        { worker: 'wrk_b', reason: 'full', capacityReason: 'platform-running-limit' },
      ],
    });
  });

  it('puts a filter reason before a remembered refusal: drained and refused lists drained', () => {
    const fleet = fleetOf(worker('a', status(), { drained: true }));
    const memos = emptyMemos();
    memos.refusals.set('a', {
      viewRevision: fleet.viewRevisions.get('a') ?? 0,
      capacityReason: 'ram-budget',
    });
    expect(
      walk([waiting('r1', { platform: 'ios' }, memos)], fleet, policy).get('r1'),
    ).toMatchObject({
      workers: [{ worker: 'a', reason: 'drained' }],
    });
  });

  it('refused with ram-budget and with no free platform slot lists the slot: the filter comes first', () => {
    const fleet = fleetOf(worker('a', noIosSlot));
    const memos = emptyMemos();
    memos.refusals.set('a', {
      viewRevision: fleet.viewRevisions.get('a') ?? 0,
      capacityReason: 'ram-budget',
    });
    expect(
      walk([waiting('r1', { platform: 'ios' }, memos)], fleet, policy).get('r1'),
    ).toMatchObject({
      workers: [{ worker: 'a', reason: 'full', capacityReason: 'platform-running-limit' }],
    });
  });

  it("refused and otherwise passing lists full with the refusal's capacity reason", () => {
    const fleet = fleetOf(worker('a'));
    const memos = emptyMemos();
    memos.refusals.set('a', {
      viewRevision: fleet.viewRevisions.get('a') ?? 0,
      capacityReason: 'global-running-limit',
    });
    expect(
      walk([waiting('r1', { platform: 'ios' }, memos)], fleet, policy).get('r1'),
    ).toMatchObject({
      workers: [{ worker: 'a', reason: 'full', capacityReason: 'global-running-limit' }],
    });
  });

  it('refused with no detail and at its RAM budget lists full with ram-budget', () => {
    const fleet = fleetOf(worker('a', atRamBudget));
    const memos = emptyMemos();
    memos.refusals.set('a', { viewRevision: fleet.viewRevisions.get('a') ?? 0 });
    expect(
      walk([waiting('r1', { platform: 'ios' }, memos)], fleet, policy).get('r1'),
    ).toMatchObject({
      workers: [{ worker: 'a', reason: 'full', capacityReason: 'ram-budget' }],
    });
  });

  it('a refusal at an older view revision no longer holds: the worker is asked again', () => {
    const fleet = fleetOf(worker('a'));
    const memos = emptyMemos();
    memos.refusals.set('a', { viewRevision: (fleet.viewRevisions.get('a') ?? 0) - 1 });
    expect(walk([waiting('r1', { platform: 'ios' }, memos)], fleet, policy).get('r1')).toEqual({
      kind: 'dispatch',
      worker: 'a',
      stage: expect.any(String) as string,
    });
  });

  it('a worker claimed by an earlier request in the same walk lists not-chosen for the later one', () => {
    const fleet = fleetOf(worker('a'));
    const outcomes = walk([waiting('r1'), waiting('r2')], fleet, policy);
    expect(outcomes.get('r1')).toMatchObject({ kind: 'dispatch', worker: 'a' });
    expect(outcomes.get('r2')).toEqual({
      kind: 'wait',
      workers: [{ worker: 'a', reason: 'not-chosen' }],
    });
  });

  it('lists each cannot-serve memo as its reason', () => {
    const fleet = fleetOf(
      worker('a'),
      worker('b'),
      worker('c'),
      worker('d'),
      worker('e', noIosSlot),
    );
    const memos = emptyMemos();
    memos.cannotServe.set('a', 'UNKNOWN_MODEL');
    memos.cannotServe.set('b', 'RUNTIME_MISSING');
    memos.cannotServe.set('c', 'NO_DRIVER');
    memos.cannotServe.set('d', 'CAPABILITY_MISSING');
    expect(
      walk(
        [
          {
            ...waiting('r1', { platform: 'ios' }, memos),
            lastCannotServe: { code: 'NO_DRIVER', message: 'x' },
          },
        ],
        fleet,
        policy,
      ).get('r1'),
    ).toMatchObject({
      workers: [
        { worker: 'a', reason: 'unknown-model' },
        { worker: 'b', reason: 'runtime-missing' },
        { worker: 'c', reason: 'no-driver' },
        { worker: 'd', reason: 'capability-missing' },
        { worker: 'e', reason: 'full', capacityReason: 'platform-running-limit' },
      ],
    });
  });

  it('a dispatch left unanswered lists disconnected while the view is unchanged', () => {
    const fleet = fleetOf(worker('a'));
    const memos = emptyMemos();
    memos.unanswered.set('a', { viewRevision: fleet.viewRevisions.get('a') ?? 0, until: Infinity });
    expect(
      walk([waiting('r1', { platform: 'ios' }, memos)], fleet, policy).get('r1'),
    ).toMatchObject({
      workers: [{ worker: 'a', reason: 'disconnected' }],
    });
  });

  it('a physical request whose worker has no pickable device lists no-free-physical', () => {
    const fleet = fleetOf(worker('a', status({ devices: [iphone('p1', { state: 'leased' })] })));
    expect(
      walk([waiting('r1', { platform: 'ios', physical: true })], fleet, policy).get('r1'),
    ).toEqual({
      kind: 'wait',
      workers: [{ worker: 'a', reason: 'no-free-physical' }],
    });
  });
});

describe('failing while waiting', () => {
  it("fails with the worker's code when the only worker that could serve answered it", () => {
    const fleet = fleetOf(worker('a'));
    const memos = emptyMemos();
    memos.cannotServe.set('a', 'UNKNOWN_MODEL');
    const request = {
      ...waiting('r1', { platform: 'ios' }, memos),
      lastCannotServe: { code: 'UNKNOWN_MODEL', message: 'not here' },
    };
    expect(walk([request], fleet, policy).get('r1')).toEqual({
      kind: 'fail',
      error: { code: 'UNKNOWN_MODEL', message: 'not here' },
    });
  });

  it('fails a waiting physical request with UNKNOWN_MODEL once its last enrolled match is gone', () => {
    const fleet = fleetOf(worker('a', status({ devices: [iphone('p1', { state: 'deleted' })] })));
    expect(
      walk([waiting('r1', { platform: 'ios', physical: true })], fleet, policy).get('r1'),
    ).toMatchObject({
      kind: 'fail',
      error: { code: 'UNKNOWN_MODEL', details: { platform: 'ios' } },
    });
  });

  it('keeps a physical request waiting while its only match sits on a disconnected or drained worker', () => {
    const fleet = fleetOf(
      worker('a', status({ devices: [iphone('p1')] }), { connection: 'disconnected' }),
      worker('b', status({ devices: [iphone('p2')] }), { drained: true }),
    );
    expect(
      walk([waiting('r1', { platform: 'ios', physical: true })], fleet, policy).get('r1'),
    ).toMatchObject({ kind: 'wait' });
  });

  it('keeps a physical request waiting, not failed, while the worker with its match restarts', () => {
    const restarting = status({ health: 'starting', devices: [iphone('p1', { state: 'leased' })] });
    const fleet = fleetOf(worker('a', restarting));
    expect(
      walk([waiting('r1', { platform: 'ios', physical: true })], fleet, policy).get('r1'),
    ).toMatchObject({
      kind: 'wait',
    });
  });

  it('fails a noWait request with NO_CAPACITY when no worker can take it now', () => {
    const fleet = fleetOf(worker('a', noIosSlot));
    expect(
      walk([waiting('r1', { platform: 'ios', noWait: true })], fleet, policy).get('r1'),
    ).toMatchObject({
      kind: 'fail',
      error: { code: 'NO_CAPACITY' },
    });
  });
});

describe('per-walk claims (DESIGN.md §4.2)', () => {
  it('sends a virtual and a physical request to the same worker in one walk', () => {
    const fleet = fleetOf(worker('w1', status({ devices: [iphone('p1')] })));
    const outcomes = walk(
      [waiting('virtual'), waiting('physical', { platform: 'ios', physical: true })],
      fleet,
      policy,
    );
    expect(outcomes.get('virtual')).toMatchObject({ kind: 'dispatch', worker: 'w1' });
    expect(outcomes.get('physical')).toMatchObject({ kind: 'dispatch', worker: 'w1' });
  });

  it('sends two physical requests for different models to the same worker in one walk', () => {
    const fleet = fleetOf(
      worker('w1', status({ devices: [iphone('p1'), iphone('p2', { model: 'iPhone 14' })] })),
    );
    const outcomes = walk(
      [
        waiting('r1', { platform: 'ios', physical: true, model: 'iPhone 15 Pro' }),
        waiting('r2', { platform: 'ios', physical: true, model: 'iPhone 14' }),
      ],
      fleet,
      policy,
    );
    expect(outcomes.get('r1')).toMatchObject({ kind: 'dispatch', worker: 'w1' });
    expect(outcomes.get('r2')).toMatchObject({ kind: 'dispatch', worker: 'w1' });
  });

  it('of two physical requests with the same match, only the older goes this walk', () => {
    const fleet = fleetOf(worker('w1', status({ devices: [iphone('p1'), iphone('p2')] })));
    const outcomes = walk(
      [
        waiting('older', { platform: 'ios', physical: true }),
        waiting('newer', { platform: 'ios', physical: true }),
      ],
      fleet,
      policy,
    );
    expect(outcomes.get('older')).toMatchObject({ kind: 'dispatch', worker: 'w1' });
    expect(outcomes.get('newer')).toEqual({
      kind: 'wait',
      workers: [{ worker: 'w1', reason: 'not-chosen' }],
    });
  });
});

describe('reasons shared by requests of one spec', () => {
  // A fleet with a bit of everything: free, full, drained, disconnected, at its RAM budget, a
  // physical phone; and a queue of mixed specs, the same specs again and again, so that the walk's
  // claims change between requests of one spec.
  const mixedFleet = () =>
    fleetOf(
      worker('a', status()),
      worker('b', noIosSlot),
      worker('c', status(), { drained: true }),
      worker('d', status(), { connection: 'disconnected' }),
      worker('e', atRamBudget),
      worker('f', status({ devices: [iphone('p1')] })),
      worker('g', status()),
    );
  const specs: WaitingRequest['spec'][] = [
    { platform: 'ios' },
    { platform: 'ios', physical: true },
    { platform: 'ios', model: 'iPad Pro' },
    { platform: 'ios', os: '17.5' },
    { platform: 'android' },
  ];
  const queue = (memos: () => RequestMemos) =>
    Array.from({ length: 24 }, (_, index) =>
      waiting(`r${index}`, specs[(index * 7) % specs.length], memos()),
    );

  it('are what each request would get on its own, claims of the walk included', () => {
    const shared = walk(queue(emptyMemos), mixedFleet(), policy);
    // A memo of a worker the fleet does not have changes no reason, but makes each request's
    // reasons its own.
    const ownMemos = () => {
      const memos = emptyMemos();
      memos.unanswered.set('no-such-worker', { viewRevision: 0, until: Infinity });
      return memos;
    };
    const alone = walk(queue(ownMemos), mixedFleet(), policy);
    expect([...shared]).toEqual([...alone]);
    const outcomes = [...shared.values()];
    expect(outcomes.filter((outcome) => outcome.kind === 'dispatch').length).toBeGreaterThan(1);
    expect(outcomes.filter((outcome) => outcome.kind === 'wait').length).toBeGreaterThan(10);
  });

  it('are built again once the walk claims a worker since', () => {
    // r1 is being withdrawn: it gets reasons, no dispatch. r2 then takes the one worker, so r3,
    // of the same spec, finds it claimed.
    const fleet = fleetOf(worker('a', atRamBudget));
    const outcomes = walk(
      [{ ...waiting('r1'), holdDispatch: true }, waiting('r2'), waiting('r3')],
      fleet,
      policy,
    );
    expect(outcomes.get('r1')).toEqual({
      kind: 'wait',
      workers: [{ worker: 'a', reason: 'full', capacityReason: 'ram-budget' }],
    });
    expect(outcomes.get('r2')).toMatchObject({ kind: 'dispatch', worker: 'a' });
    expect(outcomes.get('r3')).toEqual({
      kind: 'wait',
      workers: [{ worker: 'a', reason: 'not-chosen' }],
    });
  });

  it('leave a request with a refusal of its own its own reasons', () => {
    const fleet = fleetOf(worker('a', status()), worker('b', noIosSlot));
    const refused = emptyMemos();
    refused.refusals.set('a', {
      viewRevision: fleet.viewRevisions.get('a') ?? 0,
      capacityReason: 'ram-budget',
    });
    const outcomes = walk(
      [waiting('r1'), waiting('r2', { platform: 'ios' }, refused), waiting('r3'), waiting('r4')],
      fleet,
      policy,
    );
    const full = { worker: 'b', reason: 'full', capacityReason: 'platform-running-limit' };
    expect(outcomes.get('r1')).toMatchObject({ kind: 'dispatch', worker: 'a' });
    expect(outcomes.get('r2')).toEqual({
      kind: 'wait',
      workers: [{ worker: 'a', reason: 'full', capacityReason: 'ram-budget' }, full],
    });
    for (const key of ['r3', 'r4'])
      expect(outcomes.get(key)).toEqual({
        kind: 'wait',
        workers: [{ worker: 'a', reason: 'not-chosen' }, full],
      });
  });
});
