// The pipeline runs a list of stages over worker views (DESIGN.md §3). It names no stage: filters
// answer reasons, ranks answer scores and their own zero reasons, and the pipeline only orders and
// combines them. It is the one place that skips a stage: one with `appliesToPhysical: false`, for a
// physical request.
//
// Speed. What the stages say about a view depends only on the view and the request's device spec.
// A walk asks about thousands of requests that share a few specs, over lists of mostly the same
// views (the same list, one that leaves out the workers claimed so far, or the next walk's list with
// one worker changed). So the pipeline remembers, without changing any answer:
//   - per list of views and spec, the list in name order and the answers given on it (a WeakMap:
//     forgotten with the list);
//   - per spec, the verdicts on the views of the fullest recent list: a new list reuses the verdict
//     of every view object it shares with it, and the stages run only for views new to it (for
//     the MAX_REMEMBERED_SPECS specs asked most recently).
// This is why the caller must never mutate a view or a list it has passed in: it builds new ones.
import type { DeviceSpec } from '../index.js';
import type { Explanation, FilterStage, Pick, RankStage, Stage, WorkerView } from './types.js';

export interface Pipeline {
  readonly stages: readonly Stage[];
  /**
   * The worker to dispatch to, or none: sort by name, filter, then rank. With `excluded`, the
   * answer over the views it does not exclude, as if the list held only those: the walk leaves out
   * claimed and refused workers this way, and the list's remembered verdicts still apply.
   */
  readonly select: (
    request: DeviceSpec,
    views: readonly WorkerView[],
    excluded?: (view: WorkerView) => boolean,
  ) => Pick | undefined;
  /** Per view, in name order: the first filter reason, else the first rank zero reason, else none. */
  readonly explain: (request: DeviceSpec, views: readonly WorkerView[]) => readonly Explanation[];
}

/** The stages that apply to one kind of request, split by kind, each in stage order. */
interface Plan {
  readonly filters: readonly FilterStage[];
  readonly ranks: readonly RankStage[];
}

/** Everything the stages say about one view for one device spec. */
interface Verdict {
  readonly explanation: Explanation;
  /** No filter drops it. */
  readonly passes: boolean;
  /** One score per rank of the plan, in order; none when a filter drops it. */
  readonly scores: readonly number[];
}

/** What was answered for one list of views and one device spec, each computed when first asked. */
interface Answers {
  /** The list's views in name order, and the verdict on each. */
  readonly sorted: readonly WorkerView[];
  readonly verdicts: readonly Verdict[];
  /** Boxed: no pick is an answer too. */
  pick?: { value: Pick | undefined };
  explanations?: readonly Explanation[];
}

/** One list of views in name order, and the answers given on it per device spec. */
interface ListMemo {
  readonly sorted: readonly WorkerView[];
  readonly answersBySpec: Map<string, Answers>;
}

/** For one device spec: views in name order and the verdict on each. */
interface Column {
  readonly views: readonly WorkerView[];
  readonly verdicts: readonly Verdict[];
}

/** Device specs whose column is kept; the least recently asked is forgotten first. */
const MAX_REMEMBERED_SPECS = 512;

const NO_SCORES: readonly number[] = [];

function planFor(stages: readonly Stage[], physical: boolean): Plan {
  // The one place a stage is skipped: a physical request runs only the stages that apply to it.
  const applicable = stages.filter((stage) => !physical || stage.appliesToPhysical);
  return {
    filters: applicable.filter((stage): stage is FilterStage => stage.kind === 'filter'),
    ranks: applicable.filter((stage): stage is RankStage => stage.kind === 'rank'),
  };
}

/** The fields of a device spec that stages can read; equal keys get equal verdicts. */
function specKey(request: DeviceSpec): string {
  return JSON.stringify([
    request.platform,
    request.model,
    request.class,
    request.os,
    request.physical,
    request.requires,
  ]);
}

function byName(a: WorkerView, b: WorkerView): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function sortedByName(views: readonly WorkerView[]): readonly WorkerView[] {
  for (let index = 1; index < views.length; index++) {
    if (byName(views[index - 1] as WorkerView, views[index] as WorkerView) > 0) {
      return [...views].sort(byName);
    }
  }
  // Already in order, as the controller keeps it: no copy.
  return views;
}

/** Runs the plan's stages over one view: filters first, in order, then every rank. */
function judge(plan: Plan, view: WorkerView, request: DeviceSpec): Verdict {
  for (const filter of plan.filters) {
    const reason = filter.check(view, request);
    if (reason !== undefined) {
      const explanation: Explanation = {
        worker: view.name,
        kind: 'dropped',
        stage: filter.name,
        reason,
      };
      return { explanation, passes: false, scores: NO_SCORES };
    }
  }
  const scores: number[] = [];
  let explanation: Explanation | undefined;
  for (const rank of plan.ranks) {
    const score = rank.score(view, request);
    if (!(score >= 0 && Number.isFinite(score))) {
      throw new Error(`rank stage ${rank.name} scored ${view.name} ${score}; a score is >= 0`);
    }
    scores.push(score);
    // The first rank that scores it 0 and says why explains it.
    if (score === 0 && explanation === undefined) {
      const reason = rank.zeroReason?.(view, request);
      if (reason !== undefined) {
        explanation = { worker: view.name, kind: 'ranked-zero', stage: rank.name, reason };
      }
    }
  }
  return { explanation: explanation ?? { worker: view.name, kind: 'none' }, passes: true, scores };
}

/** The pick among the views no filter drops (in name order), and the rank that decided it. */
function rank(ranks: readonly RankStage[], passing: readonly Verdict[]): Pick | undefined {
  let survivors = passing;
  let lastDecided: string | undefined;
  let firstNarrowed: string | undefined;
  // Each rank either decides (its top score is above 0: only its top scorers survive) or abstains
  // (every survivor scored 0: nobody is dropped). There is a pick only if some rank decided: the
  // first survivor by name. Its stage is the first rank that narrowed the field (warm-hit when a
  // warm device was found), else the last that decided (everyone tied, or a single candidate: the
  // most specific word for why it was fine, free-capacity for a cold pick).
  for (const [index, stage] of ranks.entries()) {
    let top = 0;
    for (const verdict of survivors) top = Math.max(top, verdict.scores[index] ?? 0);
    if (top === 0) continue;
    const kept = survivors.filter((verdict) => verdict.scores[index] === top);
    lastDecided = stage.name;
    if (kept.length < survivors.length) firstNarrowed ??= stage.name;
    survivors = kept;
  }
  const first = survivors[0];
  if (lastDecided === undefined || first === undefined) return undefined;
  return { worker: first.explanation.worker, stage: firstNarrowed ?? lastDecided };
}

export function createPipeline(stages: readonly Stage[]): Pipeline {
  if (new Set(stages.map((stage) => stage.name)).size !== stages.length) {
    throw new Error('stage names must be unique');
  }
  const virtualPlan = planFor(stages, false);
  const physicalPlan = planFor(stages, true);
  const lists = new WeakMap<readonly WorkerView[], ListMemo>();
  const columns = new Map<string, Column>();

  /** The verdicts on a list in name order, reusing the spec's column wherever a view is in it. */
  function verdictsOn(sorted: readonly WorkerView[], request: DeviceSpec, key: string): Verdict[] {
    const plan = request.physical === true ? physicalPlan : virtualPlan;
    const column = columns.get(key);
    const known = column?.views ?? [];
    const verdicts: Verdict[] = [];
    let shared = 0;
    let position = 0;
    // Both lists are in name order, so one pass aligns them: move along the column past views this
    // list does not have (names before this view's), then reuse the verdict if the column holds
    // this very view object; a view new to the column (added, or changed: a new object) is judged.
    for (const view of sorted) {
      let candidate = known[position];
      while (candidate !== undefined && candidate !== view && candidate.name < view.name) {
        candidate = known[++position];
      }
      const verdict = candidate === view ? column?.verdicts[position] : undefined;
      if (verdict !== undefined) {
        shared++;
        position++;
        verdicts.push(verdict);
      } else {
        verdicts.push(judge(plan, view, request));
      }
    }
    // A list made only of views the column holds (the walk leaving out claimed or refused
    // workers) keeps the fuller column; a list with views new to it replaces it. The spec moves to
    // the end (most recently asked); beyond the limit the least recently asked is forgotten.
    const kept =
      column === undefined || shared < sorted.length ? { views: sorted, verdicts } : column;
    columns.delete(key);
    columns.set(key, kept);
    const oldest = columns.keys().next();
    if (columns.size > MAX_REMEMBERED_SPECS && oldest.done !== true) columns.delete(oldest.value);
    return verdicts;
  }

  function answersFor(request: DeviceSpec, views: readonly WorkerView[]): Answers {
    let list = lists.get(views);
    if (list === undefined) {
      list = { sorted: sortedByName(views), answersBySpec: new Map() };
      lists.set(views, list);
    }
    const key = specKey(request);
    let answers = list.answersBySpec.get(key);
    if (answers === undefined) {
      answers = { sorted: list.sorted, verdicts: verdictsOn(list.sorted, request, key) };
      list.answersBySpec.set(key, answers);
    }
    return answers;
  }

  function select(
    request: DeviceSpec,
    views: readonly WorkerView[],
    excluded?: (view: WorkerView) => boolean,
  ): Pick | undefined {
    const answers = answersFor(request, views);
    const ranks = (request.physical === true ? physicalPlan : virtualPlan).ranks;
    if (excluded !== undefined) {
      // A verdict depends on its view alone, so ranking the survivors left in is the answer over
      // a list of only them (without building that list and judging it again).
      return rank(
        ranks,
        answers.verdicts.filter(
          (verdict, index) => verdict.passes && !excluded(answers.sorted[index] as WorkerView),
        ),
      );
    }
    answers.pick ??= {
      value: rank(
        ranks,
        answers.verdicts.filter((verdict) => verdict.passes),
      ),
    };
    return answers.pick.value;
  }

  function explain(request: DeviceSpec, views: readonly WorkerView[]): readonly Explanation[] {
    const answers = answersFor(request, views);
    answers.explanations ??= answers.verdicts.map((verdict) => verdict.explanation);
    return answers.explanations;
  }

  return { stages, select, explain };
}
