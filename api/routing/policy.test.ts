import { describe, expect, it } from 'vitest';
import {
  WAITING_REASONS,
  WorkerReason,
  type CapacityReason,
  type Device,
  type DeviceSpec,
  type ReasonEntry,
  type WaitingReason,
} from '../index.js';
import {
  aWorker,
  atRamBudget,
  capabilities,
  capacityNotRead,
  catalogNotRead,
  devices,
  disconnected,
  drained,
  freeSlots,
  globalFull,
  health,
  incompatible,
  IPAD,
  IPHONE,
  ownQueue,
  physicalDevice,
  platformFull,
  requests,
  servesOnly,
  simulator,
  unavailableCapability,
  unread,
  withoutModel,
  withoutRuntimes,
} from '../../test/fixtures/routing.js';
import { createRoutingPolicy, STAGES } from './policy.js';
import type { Explanation, Stage, WorkerView } from './types.js';

const policy = createRoutingPolicy();

/** One of every kind of worker the fixtures can build, for the contract tests. */
const everyKindOfWorker: WorkerView[] = [
  aWorker('wrk-ready'),
  aWorker('wrk-disconnected', disconnected),
  aWorker('wrk-incompatible', incompatible),
  aWorker('wrk-drained', drained),
  aWorker('wrk-unread', unread),
  aWorker('wrk-no-catalog', catalogNotRead),
  aWorker('wrk-no-capacity', capacityNotRead),
  aWorker('wrk-starting', health('starting')),
  aWorker('wrk-unhealthy', health('unhealthy')),
  aWorker('wrk-busy', ownQueue(2, 1)),
  aWorker('wrk-camera', capabilities('camera'), unavailableCapability('nfc')),
  aWorker('wrk-android', servesOnly('android')),
  aWorker('wrk-no-iphone', withoutModel(IPHONE), withoutRuntimes('ios')),
  aWorker('wrk-ios-full', platformFull('ios')),
  aWorker('wrk-global-full', globalFull()),
  aWorker('wrk-evictable', platformFull('ios', 1), globalFull(1)),
  aWorker('wrk-ram', atRamBudget('ios'), freeSlots('ios', 1)),
  aWorker('wrk-warm', devices(simulator({ model: IPHONE }), simulator({ model: IPAD }))),
  aWorker(
    'wrk-phones',
    devices(
      physicalDevice({ model: IPHONE }),
      physicalDevice({ model: IPHONE, state: 'leased' }),
      physicalDevice({ model: IPAD, presence: { present: false, reason: 'locked' } }),
    ),
  ),
];
const everyRequest: DeviceSpec[] = [
  ...Object.values(requests),
  { ...requests.iphone, requires: ['camera'] },
  { ...requests.physicalIphone, requires: ['nfc'] },
];

describe('the stage list', () => {
  it('is the order of DESIGN.md §3, with no physical-interim stage', () => {
    expect(policy.stages.map((stage) => stage.name)).toEqual([
      'takes-requests',
      'has-capabilities',
      'can-serve',
      'healthy',
      'idle-queue',
      'warm-hit',
      'free-slot',
      'ram-budget',
      'free-capacity',
    ]);
    expect(policy.stages).toBe(STAGES);
  });

  it.each([
    ['takes-requests', 'filter', true],
    ['has-capabilities', 'filter', true],
    ['can-serve', 'filter', true],
    ['healthy', 'filter', true],
    ['idle-queue', 'filter', false],
    ['warm-hit', 'rank', true],
    ['free-slot', 'filter', false],
    ['ram-budget', 'rank', false],
    ['free-capacity', 'rank', false],
  ] as const)(
    'has %s, a %s, applying to physical requests: %s',
    (name, kind, appliesToPhysical) => {
      expect(policy.stages.find((stage) => stage.name === name)).toMatchObject({
        kind,
        appliesToPhysical,
      });
    },
  );

  it('skips exactly idle-queue, free-slot, ram-budget and free-capacity for physical requests', () => {
    expect(
      policy.stages.filter((stage) => !stage.appliesToPhysical).map((stage) => stage.name),
    ).toEqual(['idle-queue', 'free-slot', 'ram-budget', 'free-capacity']);
  });

  it('never calls a skipped stage for a physical request, and calls every other one', () => {
    const calls = new Map<string, number>();
    const count = (stage: Stage) => calls.set(stage.name, (calls.get(stage.name) ?? 0) + 1);
    const counted = (stage: Stage): Stage => {
      if (stage.kind === 'filter') {
        return {
          ...stage,
          check: (worker, request) => {
            count(stage);
            return stage.check(worker, request);
          },
        };
      }
      const zeroReason = stage.zeroReason;
      return {
        ...stage,
        score: (worker, request) => {
          count(stage);
          return stage.score(worker, request);
        },
        ...(zeroReason
          ? {
              zeroReason: (worker: WorkerView, request: DeviceSpec) => {
                count(stage);
                return zeroReason(worker, request);
              },
            }
          : {}),
      };
    };
    const countingPolicy = createRoutingPolicy(STAGES.map(counted));

    for (const request of everyRequest.filter((spec) => spec.physical === true)) {
      countingPolicy.select(request, everyKindOfWorker);
      countingPolicy.explain(request, everyKindOfWorker);
    }
    for (const stage of STAGES) {
      if (stage.appliesToPhysical) expect(calls.get(stage.name), stage.name).toBeGreaterThan(0);
      else expect(calls.get(stage.name), stage.name).toBeUndefined();
    }

    countingPolicy.explain(requests.iphone, everyKindOfWorker);
    for (const stage of STAGES) expect(calls.get(stage.name), stage.name).toBeGreaterThan(0);
  });
});

describe('the stage contract', () => {
  function expectContractReason(reason: ReasonEntry | undefined, where: string): void {
    if (reason === undefined) return;
    // The contract's own schema: one of the 13 reasons, a capacity reason only with full.
    expect(WorkerReason.safeParse({ worker: 'wrk', ...reason }).success, where).toBe(true);
  }

  it('gives every stage a unique name', () => {
    expect(new Set(policy.stages.map((stage) => stage.name)).size).toBe(policy.stages.length);
  });

  it.each(STAGES.map((stage) => [stage.name, stage] as const))(
    '%s is deterministic, changes no view, and answers only what the contract allows',
    (_name, stage) => {
      for (const worker of everyKindOfWorker) {
        const before = structuredClone(worker);
        for (const request of everyRequest) {
          const where = `${stage.name} on ${worker.name} for ${JSON.stringify(request)}`;
          if (stage.kind === 'filter') {
            const reason = stage.check(worker, request);
            expect(stage.check(worker, request), where).toEqual(reason);
            expectContractReason(reason, where);
          } else {
            const score = stage.score(worker, request);
            expect(stage.score(worker, request), where).toBe(score);
            expect(Number.isFinite(score) && score >= 0, where).toBe(true);
            if (score === 0) {
              const reason = stage.zeroReason?.(worker, request);
              expect(stage.zeroReason?.(worker, request), where).toEqual(reason);
              expectContractReason(reason, where);
            }
          }
        }
        expect(worker, `${stage.name} changed ${worker.name}`).toEqual(before);
      }
    },
  );
});

describe('the 13 reasons, each with a view that produces it', () => {
  // Routing explains what a view shows. The controller adds, from its memos of one request, the
  // reasons no view shows: a dispatch left unanswered (disconnected), a refusal (full, plain or with
  // the agent's capacity reason, device-not-present included), a cannot-serve refusal (its
  // reason), and a worker claimed earlier in the walk (not-chosen). For not-chosen the view-level
  // cause is a worker nothing is against: explain gives none, and another worker was picked.
  const table: {
    reason: WaitingReason;
    capacityReason?: CapacityReason;
    story: string;
    worker: WorkerView;
    request: DeviceSpec;
    kind: Explanation['kind'];
  }[] = [
    {
      reason: 'disconnected',
      story: 'its heartbeat lapsed',
      worker: aWorker('wrk', disconnected),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'incompatible',
      story: 'its protocol is out of range',
      worker: aWorker('wrk', incompatible),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'drained',
      story: 'an operator drained it',
      worker: aWorker('wrk', drained),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'not-ready',
      story: 'its agent has not read its drivers',
      worker: aWorker('wrk', unread),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'capability-missing',
      story: 'it lacks a required capability',
      worker: aWorker('wrk'),
      request: { ...requests.iphone, requires: ['camera'] },
      kind: 'dropped',
    },
    {
      reason: 'no-driver',
      story: 'it serves only Android',
      worker: aWorker('wrk', servesOnly('android')),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'unknown-model',
      story: 'it offers no iPhone 16',
      worker: aWorker('wrk', withoutModel(IPHONE)),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'runtime-missing',
      story: 'it has no iOS 17.5',
      worker: aWorker('wrk'),
      request: { ...requests.iphone, os: '17.5' },
      kind: 'dropped',
    },
    {
      reason: 'unhealthy',
      story: 'its agent is unhealthy',
      worker: aWorker('wrk', health('unhealthy')),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'busy',
      story: 'its own queue is not empty',
      worker: aWorker('wrk', ownQueue(1)),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'full',
      capacityReason: 'platform-running-limit',
      story: 'no free iOS slot',
      worker: aWorker('wrk', platformFull('ios')),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'full',
      capacityReason: 'global-running-limit',
      story: 'no free global slot',
      worker: aWorker('wrk', globalFull()),
      request: requests.iphone,
      kind: 'dropped',
    },
    {
      reason: 'full',
      capacityReason: 'ram-budget',
      story: 'at its RAM budget for iOS',
      worker: aWorker('wrk', atRamBudget('ios')),
      request: requests.iphone,
      kind: 'ranked-zero',
    },
    {
      reason: 'no-free-physical',
      story: 'its only matching phone is leased',
      worker: aWorker('wrk', devices(physicalDevice({ model: IPHONE, state: 'leased' }))),
      request: requests.physicalIphone,
      kind: 'ranked-zero',
    },
    {
      reason: 'not-chosen',
      story: 'nothing is against it',
      worker: aWorker('wrk'),
      request: requests.iphone,
      kind: 'none',
    },
  ];

  it('covers every reason of the contract', () => {
    expect(new Set(table.map((row) => row.reason))).toEqual(new Set(WAITING_REASONS));
  });

  it.each(table)(
    '$reason $capacityReason: $story',
    ({ reason, capacityReason, worker, request, kind }) => {
      const [explanation] = policy.explain(request, [worker]);
      expect(explanation?.kind).toBe(kind);
      if (explanation?.kind === 'dropped' || explanation?.kind === 'ranked-zero') {
        expect(explanation.reason).toEqual(
          capacityReason ? { reason, capacityReason } : { reason },
        );
      }
    },
  );
});

describe('explain over a fleet (DESIGN.md §3.2)', () => {
  it('lists a drained worker and one with no free iOS slot, in name order', () => {
    const fleet = [aWorker('wrk-b', platformFull('ios')), aWorker('wrk-a', drained)];
    expect(policy.explain(requests.iphone, fleet)).toEqual([
      { worker: 'wrk-a', kind: 'dropped', stage: 'takes-requests', reason: { reason: 'drained' } },
      {
        worker: 'wrk-b',
        kind: 'dropped',
        stage: 'free-slot',
        reason: { reason: 'full', capacityReason: 'platform-running-limit' },
      },
    ]);
    expect(policy.select(requests.iphone, fleet)).toBeUndefined();
  });

  it('names a worker at its RAM budget with no free iOS slot by the filter: platform-running-limit', () => {
    const [explanation] = policy.explain(requests.iphone, [
      aWorker('wrk-a', atRamBudget('ios'), platformFull('ios')),
    ]);
    expect(explanation).toMatchObject({
      kind: 'dropped',
      reason: { reason: 'full', capacityReason: 'platform-running-limit' },
    });
  });

  it('picks the worker below its RAM budget, and says full + ram-budget for the other', () => {
    const fleet = [aWorker('wrk-a', atRamBudget('ios')), aWorker('wrk-b', freeSlots('ios', 1))];
    expect(policy.select(requests.iphone, fleet)).toEqual({ worker: 'wrk-b', stage: 'ram-budget' });
    expect(policy.explain(requests.iphone, fleet)).toEqual([
      {
        worker: 'wrk-a',
        kind: 'ranked-zero',
        stage: 'ram-budget',
        reason: { reason: 'full', capacityReason: 'ram-budget' },
      },
      { worker: 'wrk-b', kind: 'none' },
    ]);
  });

  it('lets ram-budget abstain when every worker is at its budget: free capacity picks, the rest read full + ram-budget', () => {
    const fleet = [
      aWorker('wrk-a', atRamBudget('ios'), freeSlots('ios', 1)),
      aWorker('wrk-b', atRamBudget('ios')),
    ];
    expect(policy.select(requests.iphone, fleet)).toEqual({
      worker: 'wrk-b',
      stage: 'free-capacity',
    });
    expect(policy.explain(requests.iphone, fleet).map((explanation) => explanation.kind)).toEqual([
      'ranked-zero',
      'ranked-zero',
    ]);
  });
});

describe('virtual picks', () => {
  it('prefers a warm simulator of the model over more free capacity: warm-hit', () => {
    const fleet = [
      aWorker('wrk-a'),
      aWorker('wrk-b', freeSlots('ios', 1), devices(simulator({ model: IPHONE }))),
    ];
    expect(policy.select(requests.iphone, fleet)).toEqual({ worker: 'wrk-b', stage: 'warm-hit' });
  });

  it('picks the most free slots when no worker has a warm simulator: free-capacity', () => {
    const fleet = [
      aWorker('wrk-a', freeSlots('ios', 1)),
      aWorker('wrk-b', freeSlots('ios', 3)),
      aWorker('wrk-c', freeSlots('ios', 2)),
    ];
    expect(policy.select(requests.iphone, fleet)).toEqual({
      worker: 'wrk-b',
      stage: 'free-capacity',
    });
  });

  it('picks a worker whose only slot is an evictable one, when no other can take it', () => {
    expect(policy.select(requests.iphone, [aWorker('wrk-a', platformFull('ios', 1))])).toEqual({
      worker: 'wrk-a',
      stage: 'ram-budget',
    });
  });

  it.each([
    {
      story: 'with a warm simulator on one worker',
      fleet: (extra: Device[]) => [
        aWorker('wrk-a', devices(simulator({ model: IPHONE }))),
        aWorker('wrk-b', devices(...extra)),
      ],
    },
    {
      story: 'with free capacity deciding',
      fleet: (extra: Device[]) => [
        aWorker('wrk-a', freeSlots('ios', 1), devices(...extra)),
        aWorker('wrk-b', freeSlots('ios', 3)),
      ],
    },
  ])('are the same with and without a ready physical device of the model, $story', ({ fleet }) => {
    const without = policy.select(requests.iphone, fleet([]));
    const withPhone = policy.select(requests.iphone, fleet([physicalDevice({ model: IPHONE })]));
    expect(withPhone).toEqual(without);
    expect(without).toBeDefined();
  });
});

describe('physical picks (DESIGN.md §3.3)', () => {
  it('picks the worker with a ready enrolled match over one with a warm simulator and more capacity: warm-hit', () => {
    const fleet = [
      aWorker('wrk-a', devices(simulator({ model: IPHONE }))),
      aWorker('wrk-b', freeSlots('ios', 1), devices(physicalDevice({ model: IPHONE }))),
    ];
    expect(policy.select(requests.physicalIphone, fleet)).toEqual({
      worker: 'wrk-b',
      stage: 'warm-hit',
    });
  });

  it('gives no pick when no worker that takes requests has a ready enrolled match', () => {
    const fleet = [
      aWorker('wrk-a', drained, devices(physicalDevice({ model: IPHONE }))),
      aWorker('wrk-b', devices(physicalDevice({ model: IPHONE, state: 'leased' }))),
      aWorker('wrk-c', devices(simulator({ model: IPHONE }))),
    ];
    expect(policy.select(requests.physicalIphone, fleet)).toBeUndefined();
    expect(
      policy
        .explain(requests.physicalIphone, fleet)
        .map((explanation) => (explanation.kind === 'none' ? 'none' : explanation.reason.reason)),
    ).toEqual(['drained', 'no-free-physical', 'unknown-model']);
  });

  it.each(['locked', 'untrusted', 'not-present'] as const)(
    'gives no pick when the only ready match was last read not present (%s)',
    (reason) => {
      const fleet = [
        aWorker(
          'wrk-a',
          devices(physicalDevice({ model: IPHONE, presence: { present: false, reason } })),
        ),
      ];
      expect(policy.select(requests.physicalIphone, fleet)).toBeUndefined();
      expect(policy.explain(requests.physicalIphone, fleet)[0]).toMatchObject({
        reason: { reason: 'no-free-physical' },
      });
    },
  );

  it.each([
    {
      story: 'was last read present',
      device: physicalDevice({ model: IPHONE, presence: { present: true } }),
    },
    { story: 'has not been read yet', device: physicalDevice({ model: IPHONE }) },
  ])('picks the worker when the only ready match $story', ({ device }) => {
    expect(policy.select(requests.physicalIphone, [aWorker('wrk-a', devices(device))])).toEqual({
      worker: 'wrk-a',
      stage: 'warm-hit',
    });
  });

  it('picks a worker with no free running slot and at its RAM budget when it holds the only ready match', () => {
    const fleet = [
      aWorker(
        'wrk-a',
        platformFull('ios'),
        globalFull(),
        atRamBudget('ios'),
        devices(physicalDevice({ model: IPHONE })),
      ),
      aWorker('wrk-b', devices(simulator({ model: IPHONE }))),
    ];
    expect(policy.select(requests.physicalIphone, fleet)).toEqual({
      worker: 'wrk-a',
      stage: 'warm-hit',
    });
  });

  it.each(['starting', 'unhealthy'] as const)(
    'drops a %s worker, as for a virtual request',
    (state) => {
      const fleet = [aWorker('wrk-a', health(state), devices(physicalDevice({ model: IPHONE })))];
      expect(policy.select(requests.physicalIphone, fleet)).toBeUndefined();
      expect(policy.explain(requests.physicalIphone, fleet)[0]).toMatchObject({
        reason: { reason: 'unhealthy' },
      });
    },
  );

  it('picks a worker with a ready match whose own virtual and physical queues are not empty', () => {
    const worker = aWorker('wrk-a', ownQueue(2, 1), devices(physicalDevice({ model: IPHONE })));
    expect(policy.select(requests.physicalIphone, [worker])).toEqual({
      worker: 'wrk-a',
      stage: 'warm-hit',
    });
    // A virtual request still passes it over: busy with its own queue.
    expect(policy.select(requests.iphone, [worker])).toBeUndefined();
    expect(policy.explain(requests.iphone, [worker])[0]).toMatchObject({
      reason: { reason: 'busy' },
    });
  });

  it('matches an enrolled iPad for a tablet request, and not for one naming neither class nor model', () => {
    const fleet = [aWorker('wrk-a', devices(physicalDevice({ model: IPAD, class: 'tablet' })))];
    expect(policy.select(requests.physicalIosTablet, fleet)).toEqual({
      worker: 'wrk-a',
      stage: 'warm-hit',
    });
    expect(policy.select(requests.anyPhysicalIos, fleet)).toBeUndefined();
  });
});
