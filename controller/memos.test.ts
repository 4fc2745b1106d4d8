// How long a refusal or an unanswered dispatch is believed: until the first change of the worker's
// view after the dispatch, and never again once the view has moved, even if it comes back to what
// it was (a worker's view can go A → B → A).
import { describe, expect, it } from 'vitest';
import { viewKey, type CapacityReason } from '../api/index.js';
import {
  emptyMemos,
  endSilences,
  rememberAnswer,
  takenDevicesKey,
  type RequestMemos,
} from './memos.js';
import {
  aWorker,
  devices,
  freeSlots,
  IPAD,
  physicalDevice,
  platformFull,
  requests,
  simulator,
  type WorkerChange,
} from '../test/fixtures/routing.js';
import { createRoutingPolicy, type WorkerView } from '../api/index.js';
import { ViewRevisions } from './views.js';
import { walk, type WaitingRequest, type WalkOutcome } from './walk.js';

const policy = createRoutingPolicy();

/** One worker `a` whose views the controller observes over time, and one request for it. */
class Story {
  private readonly revisions = new ViewRevisions();
  private view: WorkerView | undefined;
  readonly memos: RequestMemos = emptyMemos();
  private routedRevision = 0;
  private routedTaken: string | undefined;

  constructor(private readonly request: WaitingRequest['spec']) {}

  /** The agent writes this view. */
  sees(...changes: WorkerChange[]): this {
    this.view = aWorker('a', ...changes);
    this.revisions.observe('a', viewKey(this.view.status));
    return this;
  }

  /** The same view as an earlier one, object for object (a view that came back). */
  seesAgain(view: WorkerView): this {
    this.view = view;
    this.revisions.observe('a', viewKey(view.status));
    return this;
  }

  get current(): WorkerView {
    if (!this.view) throw new Error('no view yet');
    return this.view;
  }

  walk(): WalkOutcome | undefined {
    const outcome = walk(
      [{ key: 'r1', spec: this.request, memos: this.memos }],
      {
        views: [this.current],
        viewRevisions: new Map([['a', this.revisions.get('a') ?? 0]]),
      },
      policy,
    ).get('r1');
    if (outcome?.kind === 'dispatch') {
      this.routedRevision = this.revisions.get('a') ?? 0;
      this.routedTaken = takenDevicesKey(this.current, this.request);
    }
    return outcome;
  }

  /** The worker refuses the dispatch the last walk made (as the controller records it). */
  refuses(capacityReason?: CapacityReason): this {
    this.memos.refusals.set('a', { viewRevision: this.routedRevision, capacityReason });
    return this;
  }

  /** The worker refuses it as the agent does when every device of the request is taken. */
  refusesAllTaken(): this {
    const refusal = { code: 'NO_CAPACITY', message: 'every iPad device on this host is in use' };
    rememberAnswer(this, 'a', { kind: 'refusal', refusal }, this.routedRevision, this.routedTaken);
    return this;
  }

  /** The dispatch the last walk made goes unanswered past the dispatch timeout. */
  doesNotAnswer(until = Infinity): this {
    rememberAnswer(this, 'a', { kind: 'unanswered', until }, this.routedRevision);
    return this;
  }
}

const dispatched = { kind: 'dispatch', worker: 'a' };
const waitingWith = (reason: string, capacityReason?: string) => ({
  kind: 'wait',
  workers: [{ worker: 'a', reason, ...(capacityReason ? { capacityReason } : {}) }],
});

describe('view revisions', () => {
  it('stay the same while the view key does, and move on every change', () => {
    const revisions = new ViewRevisions();
    const first = revisions.observe('a', 'A');
    expect(revisions.observe('a', 'A')).toBe(first);
    const second = revisions.observe('a', 'B');
    const third = revisions.observe('a', 'A');
    expect(new Set([first, second, third]).size).toBe(3);
  });

  it('start afresh for a worker removed and added again with the same view', () => {
    const revisions = new ViewRevisions();
    const before = revisions.observe('a', 'A');
    revisions.forget('a');
    expect(revisions.get('a')).toBeUndefined();
    expect(revisions.observe('a', 'A')).not.toBe(before);
  });
});

describe('a NO_CAPACITY refusal', () => {
  it('holds while the view stays as it was routed on (A → refusal → A)', () => {
    const story = new Story(requests.iphone).sees(freeSlots('ios', 1));
    expect(story.walk()).toMatchObject(dispatched);
    story.refuses('platform-running-limit');
    story.seesAgain(story.current);
    expect(story.walk()).toEqual(waitingWith('full', 'platform-running-limit'));
  });

  it('goes at the first change, and a view that comes back is asked again (A → refusal → B → A)', () => {
    const story = new Story(requests.iphone).sees(freeSlots('ios', 1));
    const roomForOne = story.current;
    expect(story.walk()).toMatchObject(dispatched);
    // Its last slot was taken by its own queue as the dispatch arrived.
    story.refuses('platform-running-limit').sees(platformFull('ios'));
    expect(story.walk()).toEqual(waitingWith('full', 'platform-running-limit'));
    // The slot frees: exactly the view it refused at.
    story.seesAgain(roomForOne);
    expect(story.walk()).toMatchObject(dispatched);
  });

  it('whose view moved before the refusal arrived does not hold at all', () => {
    const story = new Story(requests.iphone).sees(freeSlots('ios', 1));
    expect(story.walk()).toMatchObject(dispatched);
    // The agent wrote a new view (with room) before its refusal reached us.
    story.sees(freeSlots('ios', 2)).refuses('platform-running-limit');
    expect(story.walk()).toMatchObject(dispatched);
  });

  it("leaves the worker's line to the stages once its view moves", () => {
    const revisions = new ViewRevisions();
    const memos = emptyMemos();
    const walkBoth = (view: WorkerView) =>
      walk(
        [
          { key: 'older', spec: requests.iphone, memos: emptyMemos() },
          { key: 'refused', spec: requests.iphone, memos },
        ],
        {
          views: [view],
          viewRevisions: new Map([['a', revisions.observe('a', viewKey(view.status))]]),
        },
        policy,
      ).get('refused');
    const before = aWorker('a', freeSlots('ios', 1));
    memos.refusals.set('a', {
      viewRevision: revisions.observe('a', viewKey(before.status)),
      capacityReason: 'global-running-limit',
    });
    // An older request takes the worker in each walk; the refused one reads the memo while it holds.
    expect(walkBoth(before)).toEqual(waitingWith('full', 'global-running-limit'));
    expect(walkBoth(aWorker('a', freeSlots('ios', 2)))).toEqual(waitingWith('not-chosen'));
  });
});

describe('a refusal because every device of the request on the worker is taken', () => {
  // One iPad among iPhones: the view lists the iPad leased, and free slots, so routing (which
  // cannot see whether a shut-down iPad exists to boot) sends iPad requests there.
  const ipadLeased = simulator({ model: IPAD, state: 'leased' });

  it('holds while those devices stay taken, however the rest of the view moves', () => {
    const story = new Story(requests.ipad).sees(freeSlots('ios', 2), devices(ipadLeased));
    expect(story.walk()).toMatchObject(dispatched);
    story.refusesAllTaken();
    // An iPhone is granted and another reclaimed: new revisions, the iPad still leased.
    story.sees(freeSlots('ios', 1), devices(ipadLeased, simulator({ state: 'leased' })));
    expect(story.walk()).toEqual(waitingWith('full'));
    story.sees(freeSlots('ios', 1), devices({ ...ipadLeased, state: 'reclaiming' }));
    expect(story.walk()).toEqual(waitingWith('full'));
    // The iPad is ready again: asked at once.
    story.sees(freeSlots('ios', 1), devices({ ...ipadLeased, state: 'ready' }));
    expect(story.walk()).toMatchObject(dispatched);
  });

  it('ends when the taken device leaves the list (shut down: one to boot)', () => {
    const story = new Story(requests.ipad).sees(freeSlots('ios', 2), devices(ipadLeased));
    expect(story.walk()).toMatchObject(dispatched);
    story.refusesAllTaken().sees(freeSlots('ios', 1));
    expect(story.walk()).toMatchObject(dispatched);
  });

  it('routed on a view with a ready one holds only while that view does', () => {
    const ready = simulator({ model: IPAD });
    const story = new Story(requests.ipad).sees(freeSlots('ios', 2), devices(ready));
    expect(story.walk()).toMatchObject(dispatched);
    story.refusesAllTaken();
    expect(story.walk()).toEqual(waitingWith('full'));
    story.sees(freeSlots('ios', 1), devices({ ...ready, state: 'leased' }));
    expect(story.walk()).toMatchObject(dispatched);
  });
});

describe('a physical device refused as not present while the view still said present', () => {
  const phone = physicalDevice({ model: 'iPhone 16' });
  const unplugged = { ...phone, presence: { present: false, reason: 'not-present' } as const };

  it('is sent to that worker again when the device reads present once more', () => {
    const story = new Story(requests.physicalIphone).sees(devices(phone));
    const present = story.current;
    expect(story.walk()).toMatchObject(dispatched);
    story.refuses('device-not-present');
    expect(story.walk()).toEqual(waitingWith('full', 'device-not-present'));
    story.sees(devices(unplugged));
    expect(story.walk()).toMatchObject({ kind: 'wait' });
    story.seesAgain(present);
    expect(story.walk()).toMatchObject(dispatched);
  });
});

describe('a dispatch left unanswered', () => {
  it('lists the worker disconnected while its view is unchanged (A → silence → A)', () => {
    const story = new Story(requests.iphone).sees(freeSlots('ios', 1));
    expect(story.walk()).toMatchObject(dispatched);
    story.doesNotAnswer().seesAgain(story.current);
    expect(story.walk()).toEqual(waitingWith('disconnected'));
  });

  it('asks again once the silence was held as long as the worker had to answer, the view unchanged', () => {
    const story = new Story(requests.iphone).sees(freeSlots('ios', 1));
    expect(story.walk()).toMatchObject(dispatched);
    story.doesNotAnswer(10_000);
    expect(endSilences(story.memos, 9_999)).toEqual({ ended: false, nextAt: 10_000 });
    expect(story.walk()).toEqual(waitingWith('disconnected'));
    expect(endSilences(story.memos, 10_000)).toEqual({ ended: true, nextAt: undefined });
    expect(story.walk()).toMatchObject(dispatched);
  });

  it('asks again after the view moved, even back to what it was (A → silence → B → A)', () => {
    const story = new Story(requests.iphone).sees(freeSlots('ios', 1));
    const before = story.current;
    expect(story.walk()).toMatchObject(dispatched);
    story.doesNotAnswer().sees(platformFull('ios'));
    expect(story.walk()).toEqual(waitingWith('full', 'platform-running-limit'));
    story.seesAgain(before);
    expect(story.walk()).toMatchObject(dispatched);
  });
});
