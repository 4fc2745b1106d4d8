// The request machine, transition by transition, without an API server. Each test tells one
// story; every change of kind a story makes is recorded, and the last tests check that the stories
// walk every row of TRANSITIONS and that docs/ARCHITECTURE.md draws exactly that table.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { grantedIphone } from '../test/fixtures/objects.js';
import type { LeaseStatus, RequestPhase } from '../api/index.js';
import {
  TRANSITIONS,
  next,
  phaseOf,
  type Effect,
  type LeaseFacts,
  type MachineContext,
  type RequestEvent,
  type RecoveryFacts,
  type RequestLife,
} from './request-machine.js';

const NOW = 1_000_000;
const context: MachineContext = {
  now: NOW,
  waitDeadline: NOW + 300_000,
  dispatchTimeoutMs: 10_000,
  grantTimeoutMs: 600_000,
};
const pastDeadline: MachineContext = { ...context, waitDeadline: NOW - 1 };

const walked = new Set<string>();
const edge = (from: string, event: string, to: string) => `${from} --${event}--> ${to}`;
/** Rows of the table that stay in their kind (a lease's lifetime): walked when the life changes. */
const selfLoops = new Set(
  TRANSITIONS.filter(([from, , to]) => from === to).map(([from, event, to]) =>
    edge(from, event, to),
  ),
);

/** Runs the events in order from `life`; answers the last life and every effect, in order. */
function run(
  life: RequestLife,
  events: readonly RequestEvent[],
  at: MachineContext = context,
): { life: RequestLife; effects: Effect[] } {
  const effects: Effect[] = [];
  for (const event of events) {
    const step = next(life, event, at);
    const row = edge(life.kind, event.type, step.life.kind);
    if (step.life.kind !== life.kind || (step.life !== life && selfLoops.has(row))) walked.add(row);
    effects.push(...step.effects);
    life = step.life;
  }
  return { life, effects };
}

const types = (effects: readonly Effect[]) => effects.map((effect) => effect.type);

function lease(overrides: Partial<LeaseFacts> & { phase?: LeaseStatus['phase'] } = {}): LeaseFacts {
  const { phase, ...rest } = overrides;
  return {
    uid: 'uid-1',
    worker: 'mac-1',
    status: phase ? statusOf(phase) : undefined,
    expiresAt: NOW + 3_600_000,
    ...rest,
  };
}

function statusOf(phase: LeaseStatus['phase']): LeaseStatus {
  if (phase === 'Granted')
    return {
      phase,
      device: grantedIphone(),
    };
  if (phase === 'Refused')
    return { phase, refusal: { code: 'NO_CAPACITY', message: 'full', capacityReason: 'full' } };
  return { phase };
}

const waiting: RequestLife = { kind: 'waiting' };
const creating: RequestLife = { kind: 'creatingLease', worker: 'mac-1', acknowledged: false };
const dispatched: RequestLife = {
  kind: 'dispatched',
  worker: 'mac-1',
  leaseUid: 'uid-1',
  seen: true,
  acknowledged: false,
};
const granted: RequestLife = {
  kind: 'granted',
  worker: 'mac-1',
  leaseUid: 'uid-1',
  expiresAt: NOW + 3_600_000,
};
const dispatch: RequestEvent = { type: 'walkDispatched', worker: 'mac-1', stage: 'warm' };
const created = (uid = 'uid-1', watched = false): RequestEvent => ({
  type: 'leaseCreated',
  worker: 'mac-1',
  uid,
  watched,
});

describe('a new request', () => {
  it('is admitted first: the finalizer, then the fleet is asked', () => {
    const { life, effects } = run({ kind: 'new' }, [
      { type: 'requestSeen', phase: 'Pending', worker: undefined },
    ]);
    expect(life.kind).toBe('admitting');
    expect(types(effects)).toEqual(['admit']);
  });

  it('that some worker could serve waits in the queue, with its wait timer set', () => {
    const { life, effects } = run({ kind: 'admitting' }, [{ type: 'assessed' }]);
    expect(life.kind).toBe('waiting');
    expect(effects).toContainEqual({ type: 'wakeAt', timer: 'wait', at: NOW + 300_000 });
    expect(types(effects)).toContain('walk');
  });

  it('that no worker could ever serve fails at once with the code', () => {
    const error = { code: 'NO_DRIVER' as const, message: 'no worker has an Android driver' };
    const { life, effects } = run({ kind: 'admitting' }, [{ type: 'assessed', failure: error }]);
    expect(life).toEqual({ kind: 'ended', outcome: 'Failed' });
    expect(effects).toContainEqual({ type: 'writeStatus', change: { kind: 'failed', error } });
    expect(effects).toContainEqual({ type: 'recordEvent', event: 'failed' });
  });

  it('that may not wait sets no wait timer', () => {
    const { effects } = run({ kind: 'admitting' }, [{ type: 'assessed' }], {
      ...context,
      waitDeadline: undefined,
    });
    expect(types(effects)).not.toContain('wakeAt');
  });
});

describe('a dispatch', () => {
  it('creates the Lease; the answer timer starts only when our watch delivers it', () => {
    let step = run(waiting, [dispatch]);
    expect(step.life).toEqual(creating);
    expect(step.effects).toContainEqual({ type: 'createLease', worker: 'mac-1', stage: 'warm' });
    step = run(step.life, [created()]);
    expect(step.life).toMatchObject({ kind: 'dispatched', leaseUid: 'uid-1', seen: false });
    // Not delivered yet: a longer timer, should the watch never deliver it.
    expect(step.effects).toContainEqual({ type: 'wakeAt', timer: 'dispatch', at: NOW + 30_000 });
    const later = { ...context, now: NOW + 4000 };
    step = run(step.life, [{ type: 'leaseSeen', lease: lease() }], later);
    expect(step.life).toMatchObject({ seen: true });
    expect(step.effects).toEqual([{ type: 'wakeAt', timer: 'dispatch', at: NOW + 14_000 }]);
  });

  it('whose Lease our watch delivered before the create answered runs the timer from now', () => {
    const { effects } = run(creating, [created('uid-1', true)]);
    expect(effects).toContainEqual({ type: 'wakeAt', timer: 'dispatch', at: NOW + 10_000 });
  });

  it('is granted: timers off, the device in the status, the expiry set, one Event', () => {
    const { life, effects } = run(dispatched, [
      { type: 'leaseSeen', lease: lease({ phase: 'Granted' }) },
    ]);
    expect(life).toMatchObject(granted);
    expect(types(effects)).toEqual([
      'cancel',
      'writeStatus',
      'wakeAt',
      'writeStatus',
      'recordEvent',
      'walk',
    ]);
    expect(effects).toContainEqual({ type: 'wakeAt', timer: 'expiry', at: NOW + 3_600_000 });
  });

  it('granted before its create answered is granted (the agent was quicker than the answer)', () => {
    const step = run(creating, [{ type: 'leaseSeen', lease: lease({ phase: 'Granted' }) }]);
    expect(step.life).toMatchObject({ kind: 'granted', leaseUid: 'uid-1' });
    // Its dispatch is told before its grant (the grant's Event names it, and it is counted).
    expect(step.effects.filter((effect) => effect.type === 'recordEvent')).toEqual([
      { type: 'recordEvent', event: 'dispatched' },
      { type: 'recordEvent', event: 'granted' },
    ]);
    // The create's answer, coming after, changes nothing.
    expect(run(step.life, [created()]).effects).toEqual([]);
  });

  it('refused is remembered and withdrawn; the request waits, undispatched, until it is gone', () => {
    const refusal = statusOf('Refused').refusal;
    const step = run(dispatched, [{ type: 'leaseSeen', lease: lease({ phase: 'Refused' }) }]);
    expect(step.life.kind).toBe('withdrawing');
    expect(phaseOf(step.life)).toBe('Waiting');
    expect(step.effects).toContainEqual({
      type: 'remember',
      worker: 'mac-1',
      memo: { kind: 'refusal', refusal },
    });
    expect(types(step.effects)).toContain('withdrawLease');
    expect(run(step.life, [dispatch]).life.kind).toBe('withdrawing');
    expect(run(step.life, [{ type: 'leaseGone', uid: 'uid-1' }]).life.kind).toBe('waiting');
  });

  it('refused after the wait deadline fails TIMEOUT and still withdraws its Lease', () => {
    const { life, effects } = run(
      dispatched,
      [{ type: 'leaseSeen', lease: lease({ phase: 'Refused' }) }],
      pastDeadline,
    );
    expect(life).toEqual({ kind: 'ended', outcome: 'Failed', worker: 'mac-1' });
    expect(effects).toContainEqual({ type: 'writeStatus', change: { kind: 'timedOut' } });
    expect(types(effects)).toContain('withdrawLease');
  });

  it('deleted outright is waited on no longer once the delete answers', () => {
    const withdrawing = run(dispatched, [{ type: 'timerDue', timer: 'dispatch' }]).life;
    expect(run(withdrawing, [{ type: 'leaseDeleteAnswered', outright: false }]).life.kind).toBe(
      'withdrawing',
    );
    expect(run(withdrawing, [{ type: 'leaseDeleteAnswered', outright: true }]).life.kind).toBe(
      'waiting',
    );
  });

  it('a worker marks Lost is refused LOST', () => {
    const { effects } = run(dispatched, [{ type: 'leaseSeen', lease: lease({ phase: 'Lost' }) }]);
    expect(effects).toContainEqual({
      type: 'remember',
      worker: 'mac-1',
      memo: { kind: 'refusal', refusal: { code: 'LOST', message: 'the worker marked it Lost' } },
    });
  });

  it('acknowledged by the agent (a cold boot) gets the longer grant timeout and tells the dispatch, once', () => {
    const step = run(dispatched, [{ type: 'leaseSeen', lease: lease({ phase: 'Pending' }) }]);
    expect(step.life).toMatchObject({ acknowledged: true });
    expect(step.effects).toEqual([
      { type: 'wakeAt', timer: 'dispatch', at: NOW + 600_000 },
      { type: 'recordEvent', event: 'acknowledged' },
    ]);
    expect(
      run(step.life, [{ type: 'leaseSeen', lease: lease({ phase: 'Pending' }) }]).effects,
    ).toEqual([]);
  });

  it('acknowledged before its create answered keeps the grant timeout', () => {
    const step = run(creating, [
      { type: 'leaseSeen', lease: lease({ phase: 'Pending' }) },
      created(),
    ]);
    expect(step.life).toMatchObject({ kind: 'dispatched', acknowledged: true });
    expect(step.effects.filter((effect) => effect.type === 'wakeAt')).toEqual([
      { type: 'wakeAt', timer: 'dispatch', at: NOW + 600_000 },
    ]);
    // The dispatch is told as the create answers, then at once, for the cold boot is under way.
    expect(step.effects.filter((effect) => effect.type === 'recordEvent')).toEqual([
      { type: 'recordEvent', event: 'dispatched' },
      { type: 'recordEvent', event: 'acknowledged' },
    ]);
  });

  it('unanswered within the timeout is remembered as a silence and withdrawn', () => {
    const { life, effects } = run(dispatched, [{ type: 'timerDue', timer: 'dispatch' }]);
    expect(life.kind).toBe('withdrawing');
    expect(effects[0]).toEqual({ type: 'remember', worker: 'mac-1', memo: { kind: 'unanswered' } });
  });

  it('unanswered past the wait deadline fails TIMEOUT', () => {
    const { life } = run(dispatched, [{ type: 'timerDue', timer: 'dispatch' }], pastDeadline);
    expect(life).toEqual({ kind: 'ended', outcome: 'Failed', worker: 'mac-1' });
  });

  it('to a worker that disconnects is given up at once', () => {
    expect(run(dispatched, [{ type: 'workerGone', worker: 'mac-1' }]).life.kind).toBe(
      'withdrawing',
    );
    expect(run(creating, [{ type: 'workerGone', worker: 'mac-1' }]).life.kind).toBe('withdrawing');
    expect(run(dispatched, [{ type: 'workerGone', worker: 'mac-2' }]).life).toEqual(dispatched);
  });

  it('to a worker that disconnects after the deadline fails TIMEOUT', () => {
    expect(run(dispatched, [{ type: 'workerGone', worker: 'mac-1' }], pastDeadline).life.kind).toBe(
      'ended',
    );
    expect(run(creating, [{ type: 'workerGone', worker: 'mac-1' }], pastDeadline).life.kind).toBe(
      'ended',
    );
  });

  it('acknowledged during its create and silent past the grant timeout is given up', () => {
    const acknowledged: RequestLife = { ...creating, acknowledged: true };
    expect(run(acknowledged, [{ type: 'timerDue', timer: 'dispatch' }]).life.kind).toBe(
      'withdrawing',
    );
    expect(
      run(acknowledged, [{ type: 'timerDue', timer: 'dispatch' }], pastDeadline).life.kind,
    ).toBe('ended');
  });

  it('refused before its create answered is withdrawn (or times out past the deadline)', () => {
    const refusedLease = { type: 'leaseSeen', lease: lease({ phase: 'Refused' }) } as const;
    expect(run(creating, [refusedLease]).life.kind).toBe('withdrawing');
    expect(run(creating, [refusedLease], pastDeadline).life.kind).toBe('ended');
  });

  it('whose Lease vanished goes back to the queue, unremembered', () => {
    const { life, effects } = run(dispatched, [{ type: 'leaseGone', uid: 'uid-1' }]);
    expect(life.kind).toBe('waiting');
    expect(types(effects)).not.toContain('remember');
    expect(run(dispatched, [{ type: 'leaseGone', uid: 'uid-1' }], pastDeadline).life.kind).toBe(
      'ended',
    );
  });

  it('whose create failed goes back to the queue and is dispatched again after a backoff', () => {
    const { life, effects } = run(creating, [{ type: 'leaseCreateFailed', worker: 'mac-1' }]);
    expect(life.kind).toBe('waiting');
    expect(types(effects)).toEqual(['writeStatus', 'retryDispatch']);
  });
});

/** Refused, withdrawn (the Lease deleted outright), and dispatched again to the same worker. */
const refusedAndDispatchedAgain: RequestEvent[] = [
  { type: 'leaseSeen', lease: lease({ phase: 'Refused' }) },
  { type: 'leaseDeleteAnswered', outright: true },
  dispatch,
];

describe('races found so far', () => {
  it('a late DELETED of an earlier Lease of the same name touches nothing of the new dispatch', () => {
    // Refused, withdrawn; the Lease was deleted outright, so the delete's answer let the request
    // be dispatched again before the DELETED event of the first Lease came.
    let step = run(dispatched, refusedAndDispatchedAgain);
    expect(step.life.kind).toBe('creatingLease');
    // While the second create is in flight: the DELETED is the first Lease's.
    step = run(step.life, [{ type: 'leaseGone', uid: 'uid-1' }]);
    expect(step.life.kind).toBe('creatingLease');
    // And once the second Lease is known, by its uid.
    step = run(step.life, [created('uid-2'), { type: 'leaseGone', uid: 'uid-1' }]);
    expect(step.life).toMatchObject({ kind: 'dispatched', leaseUid: 'uid-2' });
    const { life } = run(step.life, [
      { type: 'leaseSeen', lease: lease({ uid: 'uid-1', phase: 'Refused' }) },
    ]);
    expect(life).toMatchObject({ kind: 'dispatched', leaseUid: 'uid-2' });
  });

  it('a late update of an earlier Lease being let go is not the answer of the create in flight', () => {
    // Refused and withdrawn (finalizer off, marked withdrawn, deleted outright); dispatched again
    // to the same worker before the withdrawal's own update of the first Lease came.
    let step = run(dispatched, refusedAndDispatchedAgain);
    expect(step.life.kind).toBe('creatingLease');
    // That update still says Refused: it is the first Lease's, not a refusal of the new one.
    step = run(step.life, [
      { type: 'leaseSeen', lease: lease({ phase: 'Refused', lettingGo: true }) },
    ]);
    expect(step.life.kind).toBe('creatingLease');
    expect(step.effects).toEqual([]);
    // The second create lands and its agent grants it: the request is granted on it.
    step = run(step.life, [
      created('uid-2', true),
      { type: 'leaseSeen', lease: lease({ uid: 'uid-2', phase: 'Granted' }) },
    ]);
    expect(step.life).toMatchObject({ kind: 'granted', leaseUid: 'uid-2' });
  });

  it('a late DELETED of an earlier Lease does not release a request granted under a new one', () => {
    const onNewLease: RequestLife = { ...granted, leaseUid: 'uid-2' };
    expect(run(onNewLease, [{ type: 'leaseGone', uid: 'uid-1' }]).life).toEqual(onNewLease);
  });

  it('withdrawal racing a grant: a grant seen while withdrawing waits for the withdrawal to answer', () => {
    // The refusal withdrew the Lease (finalizer off, `simlock.dev/withdrawn` on, both onto the
    // version read). Which of the two writes won is told by the withdrawal's answer, not by this.
    const step = run(dispatched, [
      { type: 'leaseSeen', lease: lease({ phase: 'Refused' }) },
      { type: 'leaseSeen', lease: lease({ phase: 'Granted' }) },
    ]);
    expect(step.life.kind).toBe('withdrawing');
    expect(types(step.effects)).not.toContain('recordEvent');
  });

  it('withdrawal that lost to the grant keeps it: the request is granted on that Lease', () => {
    const withdrawing = run(dispatched, [{ type: 'timerDue', timer: 'dispatch' }]).life;
    const { life, effects } = run(withdrawing, [
      { type: 'withdrawalLostToGrant', lease: lease({ phase: 'Granted' }) },
    ]);
    expect(life).toMatchObject({ kind: 'granted', worker: 'mac-1', leaseUid: 'uid-1' });
    expect(types(effects)).not.toContain('deleteLease');
    expect(types(effects)).not.toContain('createLease');
    expect(effects).toContainEqual({ type: 'recordEvent', event: 'granted' });
    expect(effects).toContainEqual({ type: 'cancel', timers: ['dispatch', 'wait'] });
  });

  it('withdrawal that lost to the grant of a request already timed out deletes the Lease', () => {
    const ended = run(dispatched, [{ type: 'timerDue', timer: 'dispatch' }], pastDeadline).life;
    expect(ended.kind).toBe('ended');
    const { life, effects } = run(ended, [
      { type: 'withdrawalLostToGrant', lease: lease({ phase: 'Granted' }) },
    ]);
    expect(life.kind).toBe('ended');
    expect(types(effects)).toEqual(['deleteLease']);
  });

  it('a create held past its withdrawal lands and is granted: the waiting request takes it', () => {
    // Given up before its create answered (the worker's heartbeat lapsed while etcd was away);
    // the withdrawal found no Lease, so the request waits undispatched. The create then lands
    // and the agent grants it: the device is the request's, not an orphan held until it expires.
    const withdrawing = run(creating, [{ type: 'workerGone', worker: 'mac-1' }]).life;
    const back = run(withdrawing, [{ type: 'leaseDeleteAnswered', outright: true }]);
    expect(back.life.kind).toBe('waiting');
    const { life, effects } = run(back.life, [
      { type: 'leaseSeen', lease: lease({ uid: 'uid-late', phase: 'Granted' }) },
    ]);
    expect(life).toMatchObject({ kind: 'granted', worker: 'mac-1', leaseUid: 'uid-late' });
    expect(effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'granted', device: statusOf('Granted').device },
    });
    expect(effects).toContainEqual({ type: 'recordEvent', event: 'granted' });
    expect(types(effects)).not.toContain('createLease');
    expect(types(effects)).not.toContain('deleteLease');
  });

  it('a waiting request leaves alone a Lease being let go, or one not yet answered', () => {
    for (const late of [
      lease({ phase: 'Granted', lettingGo: true }),
      lease({ phase: 'Pending' }),
      lease({ phase: 'Refused' }),
      lease(),
    ]) {
      const { life, effects } = run(waiting, [{ type: 'leaseSeen', lease: late }]);
      expect(life).toEqual(waiting);
      expect(effects).toEqual([]);
    }
  });

  it('a create held past its withdrawal granted after the request ended: its Lease is deleted', () => {
    const ended: RequestLife = { kind: 'ended', outcome: 'Failed' };
    const { life, effects } = run(ended, [
      { type: 'leaseSeen', lease: lease({ uid: 'uid-late', phase: 'Granted' }) },
    ]);
    expect(life).toEqual(ended);
    expect(types(effects)).toEqual(['deleteLease']);
    // One being deleted already is not deleted again.
    const deleting = run(ended, [
      { type: 'leaseSeen', lease: lease({ phase: 'Granted', lettingGo: true }) },
    ]);
    expect(deleting.effects).toEqual([]);
  });

  it('AlreadyExists on the create means an earlier process dispatched it: adopt that Lease', () => {
    const { life, effects } = run(creating, [
      { type: 'leaseExisted', worker: 'mac-1', lease: lease() },
    ]);
    expect(life).toMatchObject({ kind: 'dispatched', leaseUid: 'uid-1', seen: true });
    expect(types(effects)).not.toContain('createLease');
    expect(effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'adopted', worker: 'mac-1' },
    });
  });

  it('AlreadyExists with a Lease already answered adopts its answer', () => {
    const existed = (phase: LeaseStatus['phase']): RequestEvent => ({
      type: 'leaseExisted',
      worker: 'mac-1',
      lease: lease({ phase }),
    });
    expect(run(creating, [existed('Granted')]).life.kind).toBe('granted');
    expect(run(creating, [existed('Refused')]).life.kind).toBe('withdrawing');
    expect(run(creating, [existed('Refused')], pastDeadline).life.kind).toBe('ended');
  });

  it('AlreadyExists with a Lease that could not be read: back to the queue, tried again later', () => {
    const { life, effects } = run(creating, [
      { type: 'leaseExisted', worker: 'mac-1', lease: undefined },
    ]);
    expect(life.kind).toBe('waiting');
    expect(types(effects)).toContain('retryDispatch');
  });

  it('adoption after a restart picks each request up where its status and Lease say', () => {
    const seen = (phase: RequestPhase, withLease?: LeaseFacts) =>
      run({ kind: 'new' }, [{ type: 'requestSeen', phase, worker: 'mac-1', lease: withLease }]);
    // Dispatched by a process that died before it wrote Dispatched: adopted, not created again.
    expect(seen('Pending', lease()).life).toMatchObject({ kind: 'dispatched', seen: true });
    expect(seen('Waiting', lease()).life.kind).toBe('dispatched');
    expect(seen('Waiting').life.kind).toBe('waiting');
    expect(seen('Dispatched', lease()).life.kind).toBe('dispatched');
    expect(seen('Dispatched', lease({ phase: 'Refused' })).life.kind).toBe('withdrawing');
    expect(seen('Dispatched').life.kind).toBe('waiting');
    expect(seen('Granted', lease({ phase: 'Granted' })).life).toMatchObject({
      kind: 'granted',
      expiresAt: NOW + 3_600_000,
    });
    expect(seen('Granted', lease({ phase: 'Expired' })).life.kind).toBe('ended');
    expect(seen('Granted').effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'released', reason: 'LeaseGone', message: 'its Lease no longer exists' },
    });
    expect(types(seen('Failed', lease()).effects)).toEqual(['deleteLease']);
    expect(seen('Released').life).toEqual({ kind: 'ended', outcome: 'Released', worker: 'mac-1' });
  });

  it('adoption after a restart of a request refused past its deadline fails it', () => {
    const { life } = run(
      { kind: 'new' },
      [
        {
          type: 'requestSeen',
          phase: 'Pending',
          worker: undefined,
          lease: lease({ phase: 'Refused' }),
        },
      ],
      pastDeadline,
    );
    expect(life.kind).toBe('ended');
  });

  it('a dispatch timeout counts from the watch, not the create, and late news of it does nothing', () => {
    // Created at NOW, delivered by our watch 25 s later on a busy API server: the agent gets its
    // 10 s from then, not from the create.
    let step = run(creating, [created()]);
    const delivered = { ...context, now: NOW + 25_000 };
    step = run(step.life, [{ type: 'leaseSeen', lease: lease() }], delivered);
    expect(step.effects).toEqual([{ type: 'wakeAt', timer: 'dispatch', at: NOW + 35_000 }]);
    // Seen again (an update without an answer): the timer is not started over.
    expect(run(step.life, [{ type: 'leaseSeen', lease: lease() }], delivered).effects).toEqual([]);
  });

  it('a worker deleted while its Lease is being deleted: the request goes once the Lease does', () => {
    // The request is deleted while granted; its Lease is deleted and waits for the agent's
    // finalizer. The Worker is removed: the shell takes the finalizer off (letGoIfWorkerGone),
    // and the Lease's DELETED lets the request go.
    let step = run(granted, [{ type: 'requestDeleting', leaseExists: true }]);
    expect(step.life.kind).toBe('releasing');
    expect(step.effects).toContainEqual({ type: 'deleteLease' });
    step = run(step.life, [
      { type: 'leaseDeleteAnswered', outright: false },
      { type: 'workerGone', worker: 'mac-1' },
      { type: 'leaseSeen', lease: lease({ phase: 'Granted' }) },
    ]);
    expect(step.effects).toEqual([]);
    expect(run(step.life, [{ type: 'leaseGone', uid: 'uid-1' }]).effects).toEqual([
      { type: 'removeFinalizer' },
    ]);
  });
});

describe('endings', () => {
  it('a waiting request past its wait deadline fails TIMEOUT', () => {
    expect(run(waiting, [{ type: 'timerDue', timer: 'wait' }]).life.kind).toBe('ended');
    expect(run({ kind: 'withdrawing' }, [{ type: 'timerDue', timer: 'wait' }]).life.kind).toBe(
      'ended',
    );
  });

  it('the walk fails a request no worker left could ever serve, withdrawing or not', () => {
    const walkFailed: RequestEvent = {
      type: 'walkFailed',
      error: { code: 'UNKNOWN_MODEL', message: 'gone' },
    };
    expect(run(waiting, [walkFailed]).life.kind).toBe('ended');
    expect(run({ kind: 'withdrawing' }, [walkFailed]).life.kind).toBe('ended');
  });

  it('a granted lease is released at its expiry, and its Lease deleted', () => {
    const { life, effects } = run(granted, [{ type: 'timerDue', timer: 'expiry' }]);
    expect(life).toEqual({ kind: 'ended', outcome: 'Released', worker: 'mac-1' });
    expect(types(effects)).toContain('deleteLease');
  });

  it('a granted lease the worker marks Expired is released with that reason', () => {
    const { effects } = run(granted, [{ type: 'leaseSeen', lease: lease({ phase: 'Expired' }) }]);
    expect(effects).toContainEqual({
      type: 'writeStatus',
      change: {
        kind: 'released',
        reason: 'Expired',
        message: 'the worker marked the lease Expired',
      },
    });
  });

  it('a granted lease whose Lease was deleted is released', () => {
    expect(run(granted, [{ type: 'leaseGone', uid: 'uid-1' }]).life).toEqual({
      kind: 'ended',
      outcome: 'Released',
      worker: 'mac-1',
    });
  });

  it('a request deleted in any life lets its Lease go first, then its finalizer', () => {
    const lives: RequestLife[] = [
      { kind: 'new' },
      { kind: 'admitting' },
      waiting,
      { kind: 'withdrawing' },
      creating,
      dispatched,
      granted,
      { kind: 'ended', outcome: 'Failed' },
    ];
    for (const life of lives) {
      const withLease = run(life, [{ type: 'requestDeleting', leaseExists: true }]);
      expect(withLease.life.kind).toBe('releasing');
      expect(withLease.effects).toContainEqual({ type: 'cancel', timers: 'all' });
      expect(withLease.effects).toContainEqual({ type: 'deleteLease' });
    }
    const { effects } = run(waiting, [{ type: 'requestDeleting', leaseExists: false }]);
    expect(effects).toContainEqual({ type: 'removeFinalizer' });
    const releasing = run(granted, [{ type: 'requestDeleting', leaseExists: true }]).life;
    expect(run(releasing, [{ type: 'leaseDeleteAnswered', outright: true }]).effects).toEqual([
      { type: 'removeFinalizer' },
    ]);
  });

  it('an ended request stays ended, whatever comes late', () => {
    const ended: RequestLife = { kind: 'ended', outcome: 'Released' };
    for (const event of [
      dispatch,
      { type: 'leaseSeen', lease: lease({ phase: 'Granted' }) },
      { type: 'timerDue', timer: 'wait' },
      { type: 'timerDue', timer: 'expiry' },
    ] as RequestEvent[])
      expect(run(ended, [event]).life).toEqual(ended);
  });
});

describe("a lease's lifetime", () => {
  const MINUTE = 60_000;
  const lifetime = {
    durationMs: 60 * MINUTE,
    maxLeaseMs: 24 * 60 * MINUTE,
    expiringSoonMs: 5 * MINUTE,
  };
  const at = (now: number, more: Partial<MachineContext['lifetime'] & object> = {}) => ({
    ...context,
    now,
    lifetime: { ...lifetime, ...more },
  });
  const grantedLease = lease({
    phase: 'Granted',
    expiresAt: NOW + 60 * MINUTE,
    durationSeconds: 3600,
  });
  /** Dispatched, then granted at NOW with the lifetime `more`. */
  const grant = (more: Partial<MachineContext['lifetime'] & object> = {}) =>
    run(dispatched, [{ type: 'leaseSeen', lease: grantedLease }], at(NOW, more));

  it('a grant writes the expiry and wakes five minutes before it for the warning', () => {
    const { life, effects } = grant();
    expect(life).toMatchObject({ kind: 'granted', expiresAt: NOW + 60 * MINUTE, startedAt: NOW });
    expect(effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'expiry', expiresAt: NOW + 60 * MINUTE, expiringSoon: false },
    });
    expect(effects).toContainEqual({
      type: 'wakeAt',
      timer: 'expiringSoon',
      at: NOW + 55 * MINUTE,
    });
  });

  it('five minutes before expiry the request is marked expiring soon, once, with a warning Event', () => {
    const { life } = grant();
    const warned = run(life, [{ type: 'timerDue', timer: 'expiringSoon' }], at(NOW + 55 * MINUTE));
    expect(warned.life).toMatchObject({ kind: 'granted', warned: true });
    expect(warned.effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'expiry', expiresAt: NOW + 60 * MINUTE, expiringSoon: true },
    });
    expect(warned.effects).toContainEqual(
      expect.objectContaining({
        type: 'recordLifetimeEvent',
        reason: 'ExpiringSoon',
        warning: true,
      }),
    );
    const again = run(
      warned.life,
      [{ type: 'timerDue', timer: 'expiringSoon' }],
      at(NOW + 56 * MINUTE),
    );
    expect(again.effects).toEqual([]);
  });

  it('an extension moves the Lease and the expiry timer, clears the warning, and is recorded', () => {
    const { life } = grant();
    const warned = run(life, [{ type: 'timerDue', timer: 'expiringSoon' }], at(NOW + 55 * MINUTE));
    const extended = run(
      warned.life,
      [{ type: 'requestChanged' }],
      at(NOW + 56 * MINUTE, { durationMs: 90 * MINUTE }),
    );
    expect(extended.life).toMatchObject({ expiresAt: NOW + 90 * MINUTE, warned: false });
    expect(extended.effects).toContainEqual({
      type: 'extendLease',
      expiresAt: NOW + 90 * MINUTE,
      durationSeconds: 5400,
    });
    expect(extended.effects).toContainEqual({
      type: 'wakeAt',
      timer: 'expiry',
      at: NOW + 90 * MINUTE,
    });
    expect(extended.effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'expiry', expiresAt: NOW + 90 * MINUTE, expiringSoon: false },
    });
    expect(extended.effects).toContainEqual(
      expect.objectContaining({ type: 'recordLifetimeEvent', reason: 'Extended' }),
    );
    // The old expiry timer fires late: the lease is not released (it looks at its expiresAt).
    // Our own status write comes back as a change too: it extends nothing more.
    expect(
      run(
        extended.life,
        [{ type: 'requestChanged' }],
        at(NOW + 57 * MINUTE, { durationMs: 90 * MINUTE }),
      ).effects,
    ).toEqual([]);
  });

  it('an extension past the maximum is capped there', () => {
    const { life } = grant({ maxLeaseMs: 120 * MINUTE });
    const extended = run(
      life,
      [{ type: 'requestChanged' }],
      at(NOW + MINUTE, { durationMs: 600 * MINUTE, maxLeaseMs: 120 * MINUTE }),
    );
    expect(extended.life).toMatchObject({ expiresAt: NOW + 120 * MINUTE });
  });

  it('a holder that stops renewing: released HolderGone one interval after its last renewal', () => {
    const renewing = { holderRenewMs: 2000, holderRenewedAt: NOW };
    const { life, effects } = grant(renewing);
    expect(effects).toContainEqual({ type: 'wakeAt', timer: 'holder', at: NOW + 2000 });
    const renewed = run(
      life,
      [{ type: 'holderRenewed' }],
      at(NOW + 700, { ...renewing, holderRenewedAt: NOW + 700 }),
    );
    expect(renewed.effects).toEqual([{ type: 'wakeAt', timer: 'holder', at: NOW + 2700 }]);
    // The first wake finds the later renewal: not yet.
    const early = run(
      life,
      [{ type: 'timerDue', timer: 'holder' }],
      at(NOW + 2000, { ...renewing, holderRenewedAt: NOW + 700 }),
    );
    expect(early.life.kind).toBe('granted');
    const gone = run(
      life,
      [{ type: 'timerDue', timer: 'holder' }],
      at(NOW + 2700, { ...renewing, holderRenewedAt: NOW + 700 }),
    );
    expect(gone.life).toEqual({
      kind: 'ended',
      outcome: 'Released',
      worker: 'mac-1',
      grantedAt: NOW,
    });
    expect(gone.effects).toContainEqual({
      type: 'writeStatus',
      change: {
        kind: 'released',
        reason: 'HolderGone',
        message: 'its holder did not renew its session within 2s',
      },
    });
    expect(types(gone.effects)).toContain('deleteLease');
  });

  it('a waiting request whose holder is gone is released too, with nothing to delete', () => {
    const renewing = { holderRenewMs: 2000, holderRenewedAt: NOW };
    const gone = run(waiting, [{ type: 'timerDue', timer: 'holder' }], at(NOW + 2000, renewing));
    expect(gone.life).toEqual({ kind: 'ended', outcome: 'Released' });
    expect(types(gone.effects)).not.toContain('deleteLease');
  });

  it('idle reclaim: released Idle after the timeout with no exec, never while one runs', () => {
    const idle = { idleTimeoutMs: 5000 };
    const { life, effects } = grant(idle);
    expect(effects).toContainEqual({ type: 'wakeAt', timer: 'idle', at: NOW + 5000 });
    // An exec started at +1 s runs (the proxy renews runningUntil while it does).
    const busy = run(
      life,
      [
        {
          type: 'leaseSeen',
          lease: {
            ...grantedLease,
            activity: { lastExecAt: NOW + 1000, runningUntil: NOW + 46_000 },
          },
        },
      ],
      at(NOW + 1000, idle),
    );
    expect(busy.effects).toContainEqual({ type: 'wakeAt', timer: 'idle', at: NOW + 51_000 });
    const stillRunning = run(
      busy.life,
      [{ type: 'timerDue', timer: 'idle' }],
      at(NOW + 6000, idle),
    );
    expect(stillRunning.life.kind).toBe('granted');
    const released = run(busy.life, [{ type: 'timerDue', timer: 'idle' }], at(NOW + 51_000, idle));
    expect(released.effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'released', reason: 'Idle', message: 'no exec on it for 5s' },
    });
  });

  it('force release by an operator ends a granted or waiting request and names them', () => {
    const { life } = grant();
    const forced = run(
      life,
      [{ type: 'requestChanged' }],
      at(NOW, { forceReleasedBy: 'ops-olga' }),
    );
    expect(forced.life).toEqual({
      kind: 'ended',
      outcome: 'Released',
      worker: 'mac-1',
      grantedAt: NOW,
    });
    expect(forced.effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'released', reason: 'ForceReleased', message: 'force-released by ops-olga' },
    });
    expect(types(forced.effects)).toContain('deleteLease');
    const queued = run(
      waiting,
      [{ type: 'requestChanged' }],
      at(NOW, { forceReleasedBy: 'ops-olga' }),
    );
    expect(queued.life).toEqual({ kind: 'ended', outcome: 'Released' });
  });

  it('force release mid-way ends the request: its Lease goes, and no grant keeps it', () => {
    const forcedBy = at(NOW, { forceReleasedBy: 'ops-olga' });
    const changed = { type: 'requestChanged' } as const;
    // Dispatched: the Lease exists, and goes.
    const onDispatched = run(dispatched, [changed], forcedBy);
    expect(onDispatched.life).toEqual({ kind: 'ended', outcome: 'Released', worker: 'mac-1' });
    expect(types(onDispatched.effects)).toContain('deleteLease');
    // Admitting or withdrawing: no Lease to delete (the withdrawal in flight deletes its own).
    for (const life of [{ kind: 'admitting' }, { kind: 'withdrawing' }] as const) {
      const ended = run(life, [changed], forcedBy);
      expect(ended.life).toEqual({ kind: 'ended', outcome: 'Released' });
      expect(types(ended.effects)).not.toContain('deleteLease');
    }
    // The create in flight: let go once it answers, never left dispatched.
    const creatingStill = run(creating, [changed], forcedBy);
    expect(creatingStill.life).toEqual(creating);
    const created = run(
      creatingStill.life,
      [{ type: 'leaseCreated', worker: 'mac-1', uid: 'uid-1', watched: true }],
      forcedBy,
    );
    expect(created.life).toEqual({ kind: 'ended', outcome: 'Released', worker: 'mac-1' });
    expect(types(created.effects)).toContain('deleteLease');
    expect(created.effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'released', reason: 'ForceReleased', message: 'force-released by ops-olga' },
    });
    // A grant that races the release does not keep it either.
    const grantedAfter = run(
      dispatched,
      [{ type: 'leaseSeen', lease: lease({ phase: 'Granted' }) }],
      forcedBy,
    );
    expect(grantedAfter.life).toEqual({
      kind: 'ended',
      outcome: 'Released',
      worker: 'mac-1',
      grantedAt: NOW,
    });
  });
});

describe('a device that crashes under the lease', () => {
  const since = new Date(NOW).toISOString();
  const recovery = { since, cause: 'shut down', crashes: 1, crashBudget: 3, estimatedSeconds: 40 };
  const crashed = {
    type: 'DeviceRecovering',
    status: 'True' as const,
    reason: 'DeviceCrashed',
    message: 'iPhone 16 shut down; booting it again',
    lastTransitionTime: since,
  };
  const back = {
    ...crashed,
    status: 'False' as const,
    reason: 'DeviceRecovered',
    message: 'iPhone 16 is back',
    lastTransitionTime: new Date(NOW + 40_000).toISOString(),
  };
  const grantedLease = (extra: Partial<LeaseStatus>): LeaseFacts =>
    lease({ status: { ...statusOf('Granted'), ...extra } });
  const recovering = grantedLease({ recovery, conditions: [crashed] });
  const recovered = grantedLease({ conditions: [back] });

  it('shows its recovery while granted, tells it once, and tells when it is back', () => {
    const started = run(granted, [{ type: 'leaseSeen', lease: recovering }]);
    expect(started.life).toMatchObject({ kind: 'granted', recovery: { recovery } });
    expect(started.effects).toEqual([
      {
        type: 'writeStatus',
        change: { kind: 'recovery', facts: { recovery, condition: crashed } },
      },
      { type: 'recordRecovery', step: 'recovering', recovery },
    ]);
    // The same again: nothing. A new estimate for the same crash: written, not told again.
    expect(run(started.life, [{ type: 'leaseSeen', lease: recovering }]).effects).toEqual([]);
    const later = grantedLease({
      recovery: { ...recovery, estimatedSeconds: 60 },
      conditions: [crashed],
    });
    expect(types(run(started.life, [{ type: 'leaseSeen', lease: later }]).effects)).toEqual([
      'writeStatus',
    ]);
    const ended = run(started.life, [{ type: 'leaseSeen', lease: recovered }]);
    expect(ended.life).toMatchObject({ kind: 'granted', recovery: { condition: back } });
    expect(ended.effects).toEqual([
      { type: 'writeStatus', change: { kind: 'recovery', facts: { condition: back } } },
      { type: 'recordRecovery', step: 'recovered', cause: 'shut down' },
    ]);
    // A second crash (another since) is told again.
    const again = grantedLease({
      recovery: { ...recovery, since: back.lastTransitionTime, crashes: 2 },
      conditions: [{ ...crashed, lastTransitionTime: back.lastTransitionTime }],
    });
    expect(types(run(ended.life, [{ type: 'leaseSeen', lease: again }]).effects)).toEqual([
      'writeStatus',
      'recordRecovery',
    ]);
  });

  it('a restart reads what the status shows: nothing told twice, the end told if it came since', () => {
    const seen = (lease: LeaseFacts, shown: RecoveryFacts) =>
      run({ kind: 'new' }, [
        { type: 'requestSeen', phase: 'Granted', worker: 'mac-1', recovery: shown, lease },
      ]);
    const still = seen(recovering, { recovery, condition: crashed });
    expect(types(still.effects)).not.toContain('recordRecovery');
    const since = seen(recovered, { recovery, condition: crashed });
    expect(since.effects).toContainEqual({
      type: 'recordRecovery',
      step: 'recovered',
      cause: 'shut down',
    });
  });

  it('a recovery the controller missed whole is told as one end, once', () => {
    const ended = run(granted, [
      { type: 'leaseSeen', lease: recovered },
      { type: 'leaseSeen', lease: recovered },
    ]);
    expect(ended.effects.filter((effect) => effect.type === 'recordRecovery')).toEqual([
      { type: 'recordRecovery', step: 'recovered', cause: undefined },
    ]);
  });

  it('past its crash budget the agent marks the Lease Lost: released, its Lease deleted', () => {
    const lost = lease({ status: { phase: 'Lost', message: 'crashed 3 times in 10 minutes' } });
    const started = run(granted, [{ type: 'leaseSeen', lease: recovering }]);
    const { life, effects } = run(started.life, [{ type: 'leaseSeen', lease: lost }]);
    expect(life).toEqual({ kind: 'ended', outcome: 'Released', worker: 'mac-1' });
    expect(effects).toContainEqual({
      type: 'writeStatus',
      change: { kind: 'released', reason: 'Lost', message: 'crashed 3 times in 10 minutes' },
    });
    expect(types(effects)).toContain('deleteLease');
  });
});

describe('the table and its drawing', () => {
  const table = new Set(TRANSITIONS.map(([from, event, to]) => edge(from, event, to)));

  afterAll(() => {
    // Every row of the table is walked by some story above, and no story leaves it.
    const unwalked = [...table].filter((row) => !walked.has(row));
    const untabled = [...walked].filter((row) => !table.has(row));
    expect({ unwalked, untabled }).toEqual({ unwalked: [], untabled: [] });
  });

  it('docs/ARCHITECTURE.md draws exactly the transition table', () => {
    const doc = readFileSync(new URL('../docs/ARCHITECTURE.md', import.meta.url), 'utf8');
    const diagram = /```mermaid\nstateDiagram-v2\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const drawn = new Set<string>();
    for (const line of diagram.split('\n')) {
      const match = /^\s*(\w+) --> (\w+) ?: ?(\w+)\s*$/.exec(line);
      if (match) drawn.add(edge(match[1] ?? '', match[3] ?? '', match[2] ?? ''));
    }
    expect([...drawn].sort()).toEqual([...table].sort());
  });
});
