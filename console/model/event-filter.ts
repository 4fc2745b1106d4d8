// The Events page's filter: simlock's Events on LeaseRequests, newest first, narrowed to a worker,
// a request and a reason. An Event names no worker in a field of its own: it is about a worker when
// its request is (or was last) on it, or when its message names the worker (the controller writes
// the worker's label: "Granted … on worker-a; dispatched to worker-a (cold)").
import { workerTitle } from './views.js';
import type { EventRow, RequestView, WorkerView } from './wire.js';

export interface EventFilter {
  /** A worker's raw name. */
  worker?: string | undefined;
  /** Part of the request's namespace/name, any case. */
  request?: string | undefined;
  /** One reason exactly. */
  reason?: string | undefined;
}

/** Does `text` name `word`, whole (not as part of a longer name)? */
function names(text: string, word: string): boolean {
  if (word.length === 0) return false;
  let from = 0;
  for (;;) {
    const at = text.indexOf(word, from);
    if (at < 0) return false;
    const before = text.charAt(at - 1);
    const after = text.charAt(at + word.length);
    if (!/[\w.-]/.test(before) && !/[\w-]/.test(after)) return true;
    from = at + 1;
  }
}

/** Is the Event about this worker: its request is on it, or its message names it. */
export function eventIsAbout(
  event: EventRow,
  worker: Pick<WorkerView, 'name' | 'label'>,
  request: Pick<RequestView, 'worker'> | undefined,
): boolean {
  if (request?.worker === worker.name) return true;
  return names(event.message, worker.name) || names(event.message, workerTitle(worker));
}

/** The Events that pass the filter, newest first. */
export function filterEvents(
  events: Iterable<EventRow>,
  filter: EventFilter,
  context: {
    requests: ReadonlyMap<string, Pick<RequestView, 'worker'>>;
    workers: ReadonlyMap<string, Pick<WorkerView, 'name' | 'label'>>;
  },
): EventRow[] {
  const part = filter.request?.trim().toLowerCase() ?? '';
  const worker = filter.worker
    ? (context.workers.get(filter.worker) ?? { name: filter.worker })
    : undefined;
  return [...events]
    .filter((event) => !filter.reason || event.reason === filter.reason)
    .filter((event) => !part || `${event.namespace}/${event.request}`.toLowerCase().includes(part))
    .filter(
      (event) =>
        !worker ||
        eventIsAbout(event, worker, context.requests.get(`${event.namespace}/${event.request}`)),
    )
    .sort(
      (a, b) =>
        (b.lastAt ?? b.firstAt ?? '').localeCompare(a.lastAt ?? a.firstAt ?? '') ||
        b.key.localeCompare(a.key),
    );
}

/** The reasons among the Events, for the reason filter: as recorded, sorted. */
export function eventReasons(events: Iterable<EventRow>): string[] {
  return [...new Set([...events].map((event) => event.reason))].sort();
}
