// The pipeline's own rules, with made-up stages that read a table of facts per worker name, so
// each story says exactly what each stage answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DeviceSpec, ReasonEntry } from '../index.js';
import {
  aWorker,
  atRamBudget,
  devices,
  drained,
  IPHONE,
  physicalDevice,
  platformFull,
  requests,
  simulator,
} from '../../test/fixtures/routing.js';
import { createPipeline } from './pipeline.js';
import { STAGES } from './policy.js';
import type { FilterStage, RankStage, WorkerView } from './types.js';

/** A filter that drops the workers named, with the reason given. */
function dropping(name: string, reason: ReasonEntry, workers: string[]): FilterStage {
  return {
    name,
    kind: 'filter',
    appliesToPhysical: true,
    check: (worker) => (workers.includes(worker.name) ? reason : undefined),
  };
}

/** A rank that scores workers as listed (0 for the rest), with an optional zero reason. */
function scoring(
  name: string,
  scores: Record<string, number>,
  zeroReason?: ReasonEntry,
): RankStage {
  return {
    name,
    kind: 'rank',
    appliesToPhysical: true,
    score: (worker) => scores[worker.name] ?? 0,
    ...(zeroReason ? { zeroReason: () => zeroReason } : {}),
  };
}

const [a, b, c] = [aWorker('wrk-a'), aWorker('wrk-b'), aWorker('wrk-c')];
const everyone = [c, a, b];

describe('select', () => {
  it('sorts views by name and picks the first survivor when a rank decides on a tie', () => {
    const pipeline = createPipeline([scoring('equal', { 'wrk-a': 1, 'wrk-b': 1, 'wrk-c': 1 })]);
    expect(pipeline.select(requests.iphone, everyone)).toEqual({ worker: 'wrk-a', stage: 'equal' });
  });

  it('drops the workers a filter drops before ranking', () => {
    const pipeline = createPipeline([
      dropping('no-a', { reason: 'drained' }, ['wrk-a']),
      scoring('equal', { 'wrk-a': 5, 'wrk-b': 1, 'wrk-c': 1 }),
    ]);
    expect(pipeline.select(requests.iphone, everyone)?.worker).toBe('wrk-b');
  });

  it('keeps only the top scorers of a rank that decides, for the ranks after it', () => {
    const pipeline = createPipeline([
      scoring('first', { 'wrk-a': 1, 'wrk-b': 2, 'wrk-c': 2 }),
      scoring('second', { 'wrk-a': 9, 'wrk-b': 1, 'wrk-c': 3 }),
    ]);
    expect(pipeline.select(requests.iphone, everyone)).toEqual({ worker: 'wrk-c', stage: 'first' });
  });

  it('lets a rank whose top score is 0 abstain, dropping nobody', () => {
    const pipeline = createPipeline([
      scoring('abstains', {}),
      scoring('decides', { 'wrk-a': 1, 'wrk-b': 3, 'wrk-c': 2 }),
    ]);
    expect(pipeline.select(requests.iphone, everyone)).toEqual({
      worker: 'wrk-b',
      stage: 'decides',
    });
  });

  it('gives no pick when no rank decides, though workers pass every filter', () => {
    const pipeline = createPipeline([scoring('abstains', {}), scoring('also-abstains', {})]);
    expect(pipeline.select(requests.iphone, everyone)).toBeUndefined();
  });

  it('gives no pick when a filter drops everyone', () => {
    const pipeline = createPipeline([
      dropping('nobody', { reason: 'drained' }, ['wrk-a', 'wrk-b', 'wrk-c']),
      scoring('equal', { 'wrk-a': 1, 'wrk-b': 1, 'wrk-c': 1 }),
    ]);
    expect(pipeline.select(requests.iphone, everyone)).toBeUndefined();
  });

  it('names the first rank that narrowed the field, though an earlier one decided on a tie', () => {
    const pipeline = createPipeline([
      scoring('tie', { 'wrk-a': 1, 'wrk-b': 1, 'wrk-c': 1 }),
      scoring('narrows', { 'wrk-b': 2, 'wrk-c': 1 }),
      scoring('narrows-again', { 'wrk-b': 1 }),
    ]);
    expect(pipeline.select(requests.iphone, everyone)).toEqual({
      worker: 'wrk-b',
      stage: 'narrows',
    });
  });

  it('names the last rank that decided when a single candidate is left by the filters', () => {
    const pipeline = createPipeline([
      dropping('only-c', { reason: 'drained' }, ['wrk-a', 'wrk-b']),
      scoring('abstains', {}),
      scoring('decides', { 'wrk-c': 1 }),
      scoring('decides-too', { 'wrk-c': 4 }),
    ]);
    expect(pipeline.select(requests.iphone, everyone)).toEqual({
      worker: 'wrk-c',
      stage: 'decides-too',
    });
  });

  it('refuses a rank that scores below 0', () => {
    const pipeline = createPipeline([scoring('negative', { 'wrk-a': -1 })]);
    expect(() => pipeline.select(requests.iphone, everyone)).toThrow(/scored wrk-a -1/);
  });

  it('refuses two stages with one name', () => {
    expect(() => createPipeline([scoring('same', {}), scoring('same', {})])).toThrow(/unique/);
  });
});

describe('explain', () => {
  const pipeline = createPipeline([
    dropping('first-filter', { reason: 'drained' }, ['wrk-a']),
    scoring('first-rank', { 'wrk-c': 1 }, { reason: 'full', capacityReason: 'ram-budget' }),
    dropping('second-filter', { reason: 'busy' }, ['wrk-a', 'wrk-b']),
    scoring('second-rank', {}, { reason: 'no-free-physical' }),
  ]);

  it('gives each view, in name order, its first filter reason, else its first rank zero reason, else none', () => {
    const d = aWorker('wrk-d');
    const withD = createPipeline([
      dropping('first-filter', { reason: 'drained' }, ['wrk-a']),
      dropping('second-filter', { reason: 'busy' }, ['wrk-a', 'wrk-b']),
      scoring(
        'first-rank',
        { 'wrk-c': 1, 'wrk-d': 1 },
        { reason: 'full', capacityReason: 'ram-budget' },
      ),
      scoring('second-rank', { 'wrk-d': 1 }, { reason: 'no-free-physical' }),
    ]);
    expect(withD.explain(requests.iphone, [d, c, b, a])).toEqual([
      // Dropped by both filters: the first in stage order wins.
      { worker: 'wrk-a', kind: 'dropped', stage: 'first-filter', reason: { reason: 'drained' } },
      // Dropped by a filter and scored 0 by both ranks: the filter wins.
      { worker: 'wrk-b', kind: 'dropped', stage: 'second-filter', reason: { reason: 'busy' } },
      // Passes the filters, scored 0 by the second rank only.
      {
        worker: 'wrk-c',
        kind: 'ranked-zero',
        stage: 'second-rank',
        reason: { reason: 'no-free-physical' },
      },
      // Nothing against it.
      { worker: 'wrk-d', kind: 'none' },
    ]);
  });

  it('gives the first rank zero reason in stage order when several ranks score 0', () => {
    const twoZeros = createPipeline([
      scoring('first-rank', {}, { reason: 'full', capacityReason: 'ram-budget' }),
      scoring('second-rank', {}, { reason: 'no-free-physical' }),
    ]);
    expect(twoZeros.explain(requests.iphone, [a])).toEqual([
      {
        worker: 'wrk-a',
        kind: 'ranked-zero',
        stage: 'first-rank',
        reason: { reason: 'full', capacityReason: 'ram-budget' },
      },
    ]);
  });

  it('skips a rank that scores 0 without saying why', () => {
    const silent = createPipeline([
      scoring('silent', {}),
      scoring('says', {}, { reason: 'no-free-physical' }),
    ]);
    expect(silent.explain(requests.iphone, [a])[0]).toMatchObject({
      kind: 'ranked-zero',
      stage: 'says',
    });
  });

  it('never changes the pick', () => {
    const before = pipeline.select(requests.iphone, everyone);
    pipeline.explain(requests.iphone, everyone);
    expect(pipeline.select(requests.iphone, everyone)).toEqual(before);
    expect(before).toEqual({ worker: 'wrk-c', stage: 'first-rank' });
  });
});

describe('skipping stages for physical requests', () => {
  /** Stages that count their calls, half of them not for physical requests. */
  function countingStages() {
    const calls = new Map<string, number>();
    const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
    const stages = [true, false].flatMap((appliesToPhysical): (FilterStage | RankStage)[] => [
      {
        name: `filter-${appliesToPhysical}`,
        kind: 'filter',
        appliesToPhysical,
        check: (worker: WorkerView) => {
          count(`filter-${appliesToPhysical}`);
          return worker.name === 'wrk-a' ? { reason: 'busy' } : undefined;
        },
      },
      {
        name: `rank-${appliesToPhysical}`,
        kind: 'rank',
        appliesToPhysical,
        score: () => {
          count(`rank-${appliesToPhysical}`);
          return 0;
        },
        zeroReason: () => {
          count(`rank-${appliesToPhysical}`);
          return { reason: 'no-free-physical' };
        },
      },
    ]);
    return { calls, pipeline: createPipeline(stages) };
  }

  it('never calls a stage that does not apply to physical requests, and calls the others', () => {
    const { calls, pipeline } = countingStages();
    pipeline.select(requests.physicalIphone, everyone);
    pipeline.explain(requests.physicalIphone, everyone);
    expect(calls.get('filter-false')).toBeUndefined();
    expect(calls.get('rank-false')).toBeUndefined();
    expect(calls.get('filter-true')).toBeGreaterThan(0);
    expect(calls.get('rank-true')).toBeGreaterThan(0);
    // So a worker only the skipped filter would drop is explained by the stages that apply.
    expect(pipeline.explain(requests.physicalIphone, [a])[0]).toMatchObject({
      stage: 'filter-true',
    });
  });

  it('runs every stage for a virtual request', () => {
    const { calls, pipeline } = countingStages();
    pipeline.explain(requests.iphone, everyone);
    expect([...calls.keys()].sort()).toEqual([
      'filter-false',
      'filter-true',
      'rank-false',
      'rank-true',
    ]);
  });
});

describe('remembering verdicts', () => {
  it('judges a new view object afresh, though it has the name of one judged before', () => {
    const pipeline = createPipeline([
      {
        name: 'takes',
        kind: 'filter',
        appliesToPhysical: true,
        check: (worker) => (worker.drained ? { reason: 'drained' } : undefined),
      },
      scoring('equal', { 'wrk-a': 1, 'wrk-b': 1 }),
    ]);
    const drainedA = { ...a, drained: true };
    expect(pipeline.select(requests.iphone, [drainedA, b])?.worker).toBe('wrk-b');
    expect(pipeline.select(requests.iphone, [a, b])?.worker).toBe('wrk-a');
    expect(pipeline.explain(requests.iphone, [drainedA, b])[0]).toMatchObject({ kind: 'dropped' });
  });

  it('answers each device spec for itself over the same views', () => {
    const byPlatform: FilterStage = {
      name: 'platform',
      kind: 'filter',
      appliesToPhysical: true,
      check: (worker, request: DeviceSpec) =>
        (worker.name === 'wrk-a') === (request.platform === 'ios')
          ? undefined
          : { reason: 'no-driver' },
    };
    const pipeline = createPipeline([byPlatform, scoring('equal', { 'wrk-a': 1, 'wrk-b': 1 })]);
    const views = [a, b];
    expect(pipeline.select(requests.iphone, views)?.worker).toBe('wrk-a');
    expect(pipeline.select(requests.pixel, views)?.worker).toBe('wrk-b');
    expect(pipeline.select({ ...requests.iphone }, views)?.worker).toBe('wrk-a');
  });

  it('runs the stages once per view and device spec, however many requests share it', () => {
    let checks = 0;
    const pipeline = createPipeline([
      {
        name: 'counting',
        kind: 'filter',
        appliesToPhysical: true,
        check: () => {
          checks++;
          return undefined;
        },
      },
      scoring('equal', { 'wrk-a': 1 }),
    ]);
    for (let request = 0; request < 10; request++) {
      pipeline.select({ ...requests.iphone }, everyone);
      pipeline.explain({ ...requests.iphone }, everyone);
    }
    expect(checks).toBe(everyone.length);
  });
  it('judges no view twice across lists that leave workers out and bring them back', () => {
    const judged: string[] = [];
    const pipeline = createPipeline([
      {
        name: 'recording',
        kind: 'filter',
        appliesToPhysical: true,
        check: (worker) => {
          judged.push(worker.name);
          return undefined;
        },
      },
      scoring('equal', { 'wrk-a': 1, 'wrk-b': 1, 'wrk-c': 1 }),
    ]);
    // As a walk does: the full list, lists without the workers claimed so far, the full list again.
    pipeline.explain(requests.iphone, [a, b, c]);
    pipeline.select(requests.iphone, [b, c]);
    pipeline.select(requests.iphone, [c]);
    pipeline.explain(requests.iphone, [a, b, c]);
    // The next walk: wrk-b changed (a new object); only it is judged again.
    const changedB = aWorker('wrk-b', drained);
    pipeline.select(requests.iphone, [a, changedB, c]);
    pipeline.explain(requests.iphone, [a, changedB, c]);
    expect(judged).toEqual(['wrk-a', 'wrk-b', 'wrk-c', 'wrk-b']);
  });
});

describe('remembering never changes an answer', () => {
  // A pool of views: for each name several objects (the same worker before and after a change).
  const variants = ['wrk-a', 'wrk-b', 'wrk-c', 'wrk-d', 'wrk-e'].map((name) => [
    aWorker(name),
    aWorker(name, drained),
    aWorker(name, platformFull('ios')),
    aWorker(name, atRamBudget('ios'), devices(simulator({ model: IPHONE }))),
    aWorker(name, devices(physicalDevice({ model: IPHONE }))),
  ]);
  const specs: DeviceSpec[] = [
    requests.iphone,
    requests.pixel,
    requests.physicalIphone,
    requests.iphoneOn18,
  ];
  const policyStages = STAGES;

  it('answers any sequence of lists and requests as a pipeline that remembers nothing', () => {
    const list = fc
      .array(fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 4 })), {
        maxLength: 5,
      })
      .map((picks) => {
        // At most one object per name, in the order drawn (not always by name).
        const byName = new Map(
          picks.map(([name, variant]) => [name, variants[name]?.[variant] as WorkerView]),
        );
        return [...byName.values()];
      });
    const step = fc.record({
      list,
      spec: fc.integer({ min: 0, max: specs.length - 1 }),
      reuse: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        const remembering = createPipeline(policyStages);
        let previous: WorkerView[] = [];
        for (const { list: drawn, spec, reuse } of steps) {
          // Sometimes the very same list object again, as a walk does for explain.
          const views = reuse ? previous : drawn;
          const request = { ...specs[spec] } as DeviceSpec;
          const fresh = createPipeline(policyStages);
          expect(remembering.select(request, views)).toEqual(fresh.select(request, views));
          expect(remembering.explain(request, views)).toEqual(fresh.explain(request, views));
          previous = views;
        }
      }),
      { numRuns: 300 },
    );
  });

  it('selects with an exclusion as over a list of only the views left in', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 5, maxLength: 5 }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        fc.integer({ min: 0, max: specs.length - 1 }),
        (variantOf, left, spec) => {
          const views = variants.map((forms, index) => forms[variantOf[index] ?? 0] as WorkerView);
          const excluded = (view: WorkerView) => left[views.indexOf(view)] === true;
          const request = { ...specs[spec] } as DeviceSpec;
          const remembering = createPipeline(policyStages);
          // Asked over the full list first, so the exclusion reuses what was remembered.
          remembering.select(request, views);
          expect(remembering.select(request, views, excluded)).toEqual(
            createPipeline(policyStages).select(
              request,
              views.filter((view) => !excluded(view)),
            ),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers a spec it has forgotten, after many others, as before', () => {
    const pipeline = createPipeline(policyStages);
    const fleet = [aWorker('wrk-a'), aWorker('wrk-b', drained)];
    const first = pipeline.explain(requests.iphone, [...fleet]);
    for (let minor = 0; minor < 600; minor++) {
      pipeline.explain({ platform: 'ios', os: `18.${minor}` }, [...fleet]);
    }
    expect(pipeline.explain(requests.iphone, [...fleet])).toEqual(first);
  });
});
