// Waits for a LeaseRequest to end (Granted, Failed or Released) or to be deleted: read it, then
// watch it from that version; a watch the server ends is reopened, a failed one retried with
// backoff, and nothing waits past the deadline.
import { LeaseRequestObject } from '../api/index.js';
import { KubeApiError, isNotFound, simlockPath, type KubeClient } from '../runtime/index.js';
import { parseAnswer, type Parsed } from './kube.js';

export type WaitOutcome =
  | { kind: 'ended'; request: Parsed<LeaseRequestObject> }
  | { kind: 'deleted' }
  | { kind: 'stopped' }
  | { kind: 'deadline'; lastError?: unknown };

export interface WaitOptions {
  /** Aborted by Ctrl-C: the wait answers `stopped`. */
  signal: AbortSignal;
  /** Milliseconds since the epoch, on the clock of `now`. */
  deadline: number;
  now: () => number;
  /** Every version of the request seen, in order. */
  onChange: (request: Parsed<LeaseRequestObject>) => void;
  /** How long one watch may stay open before it is reopened (below --request-timeout). */
  watchSeconds: number;
}

function judge(request: Parsed<LeaseRequestObject>): WaitOutcome | undefined {
  if (request.object.metadata.deletionTimestamp !== undefined) return { kind: 'deleted' };
  const phase = request.object.status?.phase;
  return phase === 'Granted' || phase === 'Failed' || phase === 'Released'
    ? { kind: 'ended', request }
    : undefined;
}

/** A refusal that retrying will not change. */
function isFinalError(error: unknown): boolean {
  return error instanceof KubeApiError && (error.status === 401 || error.status === 403);
}

export async function waitForEnd(
  client: KubeClient,
  namespace: string,
  name: string,
  options: WaitOptions,
): Promise<WaitOutcome> {
  const path = simlockPath('leaseRequest', { namespace, name });
  const collection = simlockPath('leaseRequest', { namespace });
  let backoffMs = 250;
  let lastError: unknown;
  for (;;) {
    if (options.signal.aborted) return { kind: 'stopped' };
    const remainingMs = options.deadline - options.now();
    if (remainingMs <= 0) return { kind: 'deadline', lastError };
    // One read and one watch, cut when the caller stops, at the deadline, or at the outcome.
    const cut = new AbortController();
    const onStop = () => cut.abort();
    options.signal.addEventListener('abort', onStop, { once: true });
    const deadlineTimer = setTimeout(() => cut.abort(), remainingMs);
    // Set from the watch's callback: an object, so that every read sees the latest value.
    const found: { outcome?: WaitOutcome | undefined } = {};
    const see = (request: Parsed<LeaseRequestObject>) => {
      options.onChange(request);
      found.outcome = judge(request);
      if (found.outcome) cut.abort();
    };
    try {
      const current = parseAnswer(
        LeaseRequestObject,
        await client.get(path, { signal: cut.signal }),
        'leaserequest',
      );
      see(current);
      if (!found.outcome) {
        const watchSeconds = Math.max(
          1,
          Math.min(options.watchSeconds, Math.ceil(remainingMs / 1000)),
        );
        await client.watch(
          collection,
          {
            fieldSelector: `metadata.name=${name}`,
            resourceVersion: current.object.metadata.resourceVersion,
            timeoutSeconds: watchSeconds,
            allowWatchBookmarks: true,
          },
          (event) => {
            if (found.outcome) return;
            if (event.type === 'DELETED') {
              found.outcome = { kind: 'deleted' };
              cut.abort();
              return;
            }
            if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
            const parsed = LeaseRequestObject.safeParse(event.object);
            if (parsed.success) {
              see({ raw: event.object as Record<string, unknown>, object: parsed.data });
            }
          },
          cut.signal,
        );
      }
      backoffMs = 250;
      lastError = undefined;
    } catch (error) {
      if (!found.outcome) {
        if (options.signal.aborted) return { kind: 'stopped' };
        if (isNotFound(error)) return { kind: 'deleted' };
        if (isFinalError(error)) throw error;
        if (!cut.signal.aborted) {
          lastError = error;
          await pause(backoffMs, options.signal);
          backoffMs = Math.min(backoffMs * 2, 5000);
        }
      }
    } finally {
      clearTimeout(deadlineTimer);
      options.signal.removeEventListener('abort', onStop);
    }
    if (found.outcome) return found.outcome;
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
