// Waits for a LeaseRequest to end (Granted, Failed or Released) or to be deleted, with the same
// informer the controller and the agent use (runtime/informer.ts): list it by name, then watch it
// from that version; a watch the server ends is reopened, a failed one retried with backoff. Only
// a refusal that retrying will not change (401, 403) ends the wait with an error, and nothing
// waits past the deadline.
import { LeaseRequestObject } from '../api/index.js';
import {
  Informer,
  KubeApiError,
  simlockPath,
  type InformerEvent,
  type KubeClient,
  type KubeObject,
} from '../runtime/index.js';
import type { Parsed } from './kube.js';

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
  if (options.signal.aborted) return { kind: 'stopped' };
  const remainingMs = options.deadline - options.now();
  if (remainingMs <= 0) return { kind: 'deadline' };
  const key = `${namespace}/${name}`;
  let lastError: unknown;
  let settle: (outcome: WaitOutcome) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const outcome = new Promise<WaitOutcome>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const informer = new Informer(client, {
    path: simlockPath('leaseRequest', { namespace }),
    fieldSelector: `metadata.name=${name}`,
    watchTimeoutSeconds: Math.max(1, Math.min(options.watchSeconds, Math.ceil(remainingMs / 1000))),
    initialBackoffMs: 250,
    maxBackoffMs: 5000,
    onError: (error) => {
      lastError = error;
      if (isFinalError(error)) fail(error);
    },
    // The cluster answers again: an earlier failure no longer explains a deadline.
    onListed: () => (lastError = undefined),
  });
  const see = (object: KubeObject) => {
    const parsed = LeaseRequestObject.safeParse(object);
    if (!parsed.success) return;
    const request = { raw: object as Record<string, unknown>, object: parsed.data };
    options.onChange(request);
    const ended = judge(request);
    if (ended) settle(ended);
  };
  informer.on((event: InformerEvent<KubeObject>) => {
    if (event.type === 'deleted') settle({ kind: 'deleted' });
    else see(event.object);
  });
  const onStop = () => settle({ kind: 'stopped' });
  options.signal.addEventListener('abort', onStop, { once: true });
  const deadline = setTimeout(() => settle({ kind: 'deadline', lastError }), remainingMs);
  informer.start();
  // Created before the wait began: a first list without it means it is gone already.
  void informer.waitForSync().then(() => {
    if (!informer.get(key)) settle({ kind: 'deleted' });
  });
  try {
    return await outcome;
  } finally {
    clearTimeout(deadline);
    options.signal.removeEventListener('abort', onStop);
    await informer.stop();
  }
}
