// The agent's progress making or booting a device (api/grant-progress.ts), through the request
// machine: copied to the request's status while it is Dispatched, one write per change, an Event
// per stage told after its dispatch, and gone when the request leaves Dispatched.
import { describe, expect, it } from 'vitest';
import { grantedIphone } from '../test/fixtures/objects.js';
import type { GrantProgress, LeaseStatus } from '../api/index.js';
import {
  next,
  type Effect,
  type LeaseFacts,
  type MachineContext,
  type RequestEvent,
  type RequestLife,
} from './request-machine.js';
import { desiredStatus, type RequestState } from './status.js';

const NOW = 1_000_000;
const context: MachineContext = {
  now: NOW,
  waitDeadline: NOW + 300_000,
  dispatchTimeoutMs: 10_000,
  grantTimeoutMs: 600_000,
};

const provisioning: GrantProgress = {
  stage: 'provisioning',
  since: '2026-12-01T12:00:00Z',
  estimatedSeconds: 40,
  basis: 'median of 5 on this host',
};
const booting: GrantProgress = {
  stage: 'booting',
  since: '2026-12-01T12:00:41Z',
  estimatedSeconds: 25,
  basis: 'median of 5 on this host',
};

function run(life: RequestLife, events: readonly RequestEvent[]) {
  const effects: Effect[] = [];
  for (const event of events) {
    const step = next(life, event, context);
    effects.push(...step.effects);
    life = step.life;
  }
  return { life, effects };
}

function seen(status: LeaseStatus | undefined): RequestEvent {
  const lease: LeaseFacts = {
    uid: 'uid-1',
    worker: 'mac-1',
    status,
    expiresAt: NOW + 3_600_000,
  };
  return { type: 'leaseSeen', lease };
}
const pending = (progress?: GrantProgress): RequestEvent =>
  seen({ phase: 'Pending', ...(progress ? { progress } : {}) });
const grantedLease = seen({
  phase: 'Granted',
  device: grantedIphone(),
});

const dispatched: RequestLife = {
  kind: 'dispatched',
  worker: 'mac-1',
  leaseUid: 'uid-1',
  seen: true,
  acknowledged: false,
};
const creating: RequestLife = { kind: 'creatingLease', worker: 'mac-1', acknowledged: false };

const progressWrites = (effects: readonly Effect[]) =>
  effects.flatMap((effect) =>
    effect.type === 'writeStatus' && effect.change.kind === 'progress'
      ? [effect.change.progress?.stage ?? 'none']
      : [],
  );
const told = (effects: readonly Effect[]) =>
  effects.flatMap((effect) =>
    effect.type === 'recordEvent'
      ? [effect.event]
      : effect.type === 'recordProgress'
        ? [effect.progress.stage]
        : [],
  );

describe("a dispatch's progress", () => {
  it('is written once per change: provisioning, then booting; the same one again writes nothing', () => {
    const { life, effects } = run(dispatched, [
      pending(provisioning),
      pending(provisioning),
      pending({ ...provisioning }),
      pending(booting),
      pending(booting),
    ]);
    expect(progressWrites(effects)).toEqual(['provisioning', 'booting']);
    expect(told(effects)).toEqual(['acknowledged', 'provisioning', 'booting']);
    expect(life).toMatchObject({ kind: 'dispatched', acknowledged: true, progress: booting });
    // The first report of a stage also acknowledges the dispatch: the grant timeout, once.
    expect(effects.filter((effect) => effect.type === 'wakeAt')).toEqual([
      { type: 'wakeAt', timer: 'dispatch', at: NOW + 600_000 },
    ]);
  });

  it('of a new estimate for the same stage is written, and told no second time', () => {
    const { effects } = run(dispatched, [
      pending(provisioning),
      pending({ ...provisioning, estimatedSeconds: 55 }),
    ]);
    expect(progressWrites(effects)).toEqual(['provisioning', 'provisioning']);
    expect(told(effects)).toEqual(['acknowledged', 'provisioning']);
  });

  it('that the agent takes off is taken off the request', () => {
    const { life, effects } = run(dispatched, [pending(booting), pending()]);
    expect(progressWrites(effects)).toEqual(['booting', 'none']);
    expect(life).toMatchObject({ progress: undefined });
  });

  it('reported before the create answered is written at once and told after the dispatch', () => {
    let step = run(creating, [pending(provisioning)]);
    expect(progressWrites(step.effects)).toEqual(['provisioning']);
    expect(told(step.effects)).toEqual([]);
    step = run(step.life, [
      { type: 'leaseCreated', worker: 'mac-1', uid: 'uid-1', watched: true },
      pending(provisioning),
      pending(booting),
    ]);
    expect(told(step.effects)).toEqual(['dispatched', 'acknowledged', 'provisioning', 'booting']);
    expect(progressWrites(step.effects)).toEqual(['booting']);
  });

  it('ends with the grant: the status change is the grant, no stage is told again', () => {
    const { life, effects } = run(dispatched, [pending(booting), grantedLease]);
    expect(life.kind).toBe('granted');
    expect(told(effects)).toEqual(['acknowledged', 'booting', 'granted']);
  });

  it('picked up after a restart tells nothing again when the Lease says what the status says', () => {
    const restarted = run({ kind: 'new' }, [
      {
        type: 'requestSeen',
        phase: 'Dispatched',
        worker: 'mac-1',
        progress: booting,
        lease: (pending(booting) as Extract<RequestEvent, { type: 'leaseSeen' }>).lease,
      },
    ]);
    expect(restarted.life).toMatchObject({ kind: 'dispatched', progress: booting });
    expect(progressWrites(restarted.effects)).toEqual([]);
    expect(told(restarted.effects)).toEqual(['acknowledged']);
  });
});

describe('the status shows progress', () => {
  // A life of each phase, on mac-1 where it has a worker.
  const lives = {
    Dispatched: {
      kind: 'dispatched',
      worker: 'mac-1',
      leaseUid: 'u',
      seen: true,
      acknowledged: true,
    },
    Waiting: { kind: 'waiting' },
    Granted: { kind: 'granted', worker: 'mac-1', leaseUid: 'u' },
    Failed: { kind: 'ended', outcome: 'Failed', worker: 'mac-1' },
    Released: { kind: 'ended', outcome: 'Released', worker: 'mac-1' },
  } satisfies Record<string, RequestLife>;
  const state = (phase: keyof typeof lives): RequestState => ({
    life: lives[phase],
    workers: [],
    conditions: [],
    progress: booting,
  });

  it('only while the request is Dispatched', () => {
    expect(desiredStatus(state('Dispatched')).progress).toEqual(booting);
    for (const phase of ['Waiting', 'Granted', 'Failed', 'Released'] as const)
      expect(desiredStatus(state(phase)).progress, phase).toBeUndefined();
  });
});
