// `list --requests` (DESIGN.md §7.1): one line per waiting request, and under a request
// waiting in the controller's queue one indented line per known worker with its reason; a
// dispatched one whose worker makes or boots the device says which stage, with its estimate. A
// request waiting in an agent's own queue is one line with its one reason after an em dash. A
// granted request whose device crashed and is booted again under the lease waits for its device
// too: it is listed, recovering, with the cause and the estimate. Pure: objects and the time in,
// lines out.
import {
  grantEstimateText,
  reasonLine,
  reasonsByWorker,
  type AgentQueueEntry,
  type GrantProgress,
  type LeaseRequestObject,
  type WorkerObject,
} from '../../api/index.js';
import { workerLabels } from '../../client/index.js';
import { estimateText, recoveringText, stageText } from '../../runtime/index.js';

/** How people see a worker: its label, else its name. */
export type WorkerDisplay = (name: string) => string;

export function workerDisplay(workers: readonly WorkerObject[]): WorkerDisplay {
  return workerLabels(workers);
}

/** Whole seconds from `since` (an ISO time) to `now`; never negative; 0 when unknown. */
export function waitingSeconds(since: string | Date | undefined, now: number): number {
  if (since === undefined) return 0;
  const start = since instanceof Date ? since.getTime() : Date.parse(since);
  if (!Number.isFinite(start)) return 0;
  return Math.max(0, Math.floor((now - start) / 1000));
}

/**
 * A stage of making or booting the device, as the plugin prints it: `booting iPhone 16 on
 * worker-a (about 25 s)`; without the device when the line names it already.
 */
export function stageLine(
  progress: GrantProgress,
  where: { device?: string | undefined; worker: string },
): string {
  const estimate = estimateText(progress);
  return stageText(progress, where) + (estimate !== undefined ? ` (${estimate})` : '');
}

/** A request has not reached its end: it is still waiting for a device, in any sense. */
export function isUnfinished(request: LeaseRequestObject): boolean {
  const phase = request.status?.phase ?? 'Pending';
  return phase === 'Pending' || phase === 'Waiting' || phase === 'Dispatched';
}

/** Granted, and its device is being booted again after a crash (status.recovery). */
export function isRecovering(request: LeaseRequestObject): boolean {
  return request.status?.phase === 'Granted' && request.status.recovery !== undefined;
}

/** What `list --requests` shows: the unfinished requests, and the granted ones recovering. */
export function isListed(request: LeaseRequestObject): boolean {
  return isUnfinished(request) || isRecovering(request);
}

export interface RequestLineOptions {
  now: number;
  worker: WorkerDisplay;
  /** With -A: requests are named namespace/name. */
  withNamespace?: boolean;
}

function requestName(request: LeaseRequestObject, withNamespace: boolean | undefined): string {
  const { name, namespace } = request.metadata;
  return withNamespace && namespace ? `${namespace}/${name}` : name;
}

/** What was asked for: the platform, and the model or else the class when one was named. */
function asked(platform: string, modelOrClass: string | undefined): string {
  return modelOrClass === undefined ? platform : `${platform} ${modelOrClass}`;
}

/** The parts of a line that are there, comma-separated: absent ones are left out, never "-". */
function present(...parts: (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined && part !== '').join(', ');
}

/**
 * One request in the controller's queue:
 * `Request req_3: ci, ios iPhone 16, queued at 1, waiting 42s, about 3m (1 lease of iPhone 16
 * ends before)`, then `  wrk_a: drained` per worker
 * while it waits with reasons; dispatched to a worker that makes or boots the device,
 * `Request req_3: ci, ios iPhone 16, booting on wrk_a (about 25 s), waiting 42s`.
 */
export function controllerRequestLines(
  request: LeaseRequestObject,
  options: RequestLineOptions,
): string[] {
  const { spec, status } = request;
  if (status?.phase === 'Granted' && status.recovery !== undefined) {
    // `Request ci-5: ci, ios iPhone 16, recovering on wrk_a for 12s: device iPhone 16 (…)
    // crashed (shut down): booting it again, back in about 40 s`
    const on = options.worker(status.worker ?? '-');
    const took = waitingSeconds(status.recovery.since, options.now);
    return [
      `Request ${requestName(request, options.withNamespace)}: ` +
        present(spec.holder, asked(spec.platform, spec.model ?? spec.class)) +
        `, recovering on ${on} for ${took}s: ${recoveringText(status.recovery, status.device)}`,
    ];
  }
  const since = status?.queuedAt ?? request.metadata.creationTimestamp;
  const head =
    `Request ${requestName(request, options.withNamespace)}: ` +
    present(
      spec.holder,
      asked(spec.platform, spec.model ?? spec.class),
      status?.position === undefined ? undefined : `queued at ${status.position}`,
      status?.phase === 'Dispatched' && status.progress !== undefined
        ? stageLine(status.progress, { worker: options.worker(status.worker ?? '-') })
        : undefined,
      `waiting ${waitingSeconds(since, options.now)}s`,
      status?.phase === 'Waiting' && status.estimate !== undefined
        ? grantEstimateText(status.estimate, options.now)
        : undefined,
    );
  const lines = [head];
  if (status?.phase === 'Waiting') {
    for (const entry of reasonsByWorker(status)) {
      lines.push(`  ${options.worker(entry.worker)}: ${reasonLine(entry, spec.platform)}`);
    }
  }
  return lines;
}

/**
 * One request in an agent's own queue (a local lease): one line, its one reason after an em dash.
 * `position` counts from 1 in that agent's queue.
 */
export function agentEntryLine(
  entry: AgentQueueEntry,
  workerLabel: string,
  position: number,
  now: number,
): string {
  return (
    `Request ${entry.id}: ` +
    present(
      entry.holder === undefined ? `on ${workerLabel}` : `${entry.holder} on ${workerLabel}`,
      asked(entry.platform, entry.model),
      `queued at ${position}`,
      `waiting ${waitingSeconds(entry.queuedAt, now)}s`,
    ) +
    ` — ${reasonLine(entry, entry.platform)}`
  );
}

/** Controller requests by queue position, those without one by age; then each agent's queue. */
export function requestListLines(
  requests: readonly LeaseRequestObject[],
  workers: readonly WorkerObject[],
  options: {
    now: number;
    withNamespace?: boolean;
    /** Lines after a request's own (`-o wide`: what would unblock it). */
    extra?: (request: LeaseRequestObject) => readonly string[];
  },
): string[] {
  const worker = workerDisplay(workers);
  const ordered = requests.filter(isListed).sort(queueOrder);
  const lines = ordered.flatMap((request) => [
    ...controllerRequestLines(request, { ...options, worker }),
    ...(options.extra?.(request) ?? []),
  ]);
  const byName = [...workers].sort((a, b) => compare(a.metadata.name, b.metadata.name));
  for (const each of byName) {
    const label = worker(each.metadata.name);
    (each.status?.queue ?? []).forEach((entry, index) => {
      lines.push(agentEntryLine(entry, label, index + 1, options.now));
    });
  }
  return lines;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function createdAt(request: LeaseRequestObject): number {
  const raw = request.status?.queuedAt ?? request.metadata.creationTimestamp;
  const time = raw instanceof Date ? raw.getTime() : Date.parse(raw ?? '');
  return Number.isFinite(time) ? time : 0;
}

function queueOrder(a: LeaseRequestObject, b: LeaseRequestObject): number {
  const pa = a.status?.position ?? Number.POSITIVE_INFINITY;
  const pb = b.status?.position ?? Number.POSITIVE_INFINITY;
  if (pa !== pb) return pa < pb ? -1 : 1;
  return (
    createdAt(a) - createdAt(b) ||
    compare(a.metadata.namespace ?? '', b.metadata.namespace ?? '') ||
    compare(a.metadata.name, b.metadata.name)
  );
}
