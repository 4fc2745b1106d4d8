// A watch through client-node's Watch (ADR 0013): it streams the events and, since 2.x, cuts a
// connection that stays silent too long. What is ours: the idle limit (client-node's default is
// 30 s, shorter than the API server's bookmark interval, which would end every quiet watch), the
// abort signal, and errors as the rest of runtime/ throws them.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeUnavailableError } from './kube-errors.js';

export interface WatchEvent {
  type: string;
  object: unknown;
}

/** client-node keeps its idle limit in a field its types call private; it is set here only. */
interface WatchWithIdleLimit {
  requestTimeoutMs: number;
}

/**
 * Watches `path` until the server ends the watch or `signal` aborts (both resolve), calling
 * `onEvent` for each event. Rejects with KubeApiError on an error status, KubeUnavailableError on
 * a broken connection or one silent for `idleMs`.
 */
export function watchWithClientNode(
  config: KubeConfig,
  path: string,
  query: Record<string, string | number | boolean | undefined>,
  onEvent: (event: WatchEvent) => void,
  signal: AbortSignal,
  idleMs: number,
): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  const watcher = new Watch(config);
  if (typeof (watcher as unknown as Partial<WatchWithIdleLimit>).requestTimeoutMs !== 'number') {
    throw new Error('client-node Watch has no requestTimeoutMs: its idle limit cannot be set');
  }
  (watcher as unknown as WatchWithIdleLimit).requestTimeoutMs = idleMs;
  return new Promise<void>((resolve, reject) => {
    let request: AbortController | undefined;
    const abort = () => request?.abort();
    signal.addEventListener('abort', abort, { once: true });
    const done = (error: unknown) => {
      signal.removeEventListener('abort', abort);
      if (error === null || error === undefined || signal.aborted) resolve();
      else reject(watchError(error, path, idleMs));
    };
    watcher
      .watch(
        path,
        query,
        (type: string, object: unknown) => {
          if (typeof type === 'string') onEvent({ type, object });
        },
        done,
      )
      .then(
        (controller) => {
          request = controller;
          // Aborted while the watch was being opened: the listener had nothing to abort yet.
          if (signal.aborted) controller.abort();
        },
        (error: unknown) => done(error),
      );
  });
}

function watchError(error: unknown, path: string, idleMs: number): Error {
  const record =
    error !== null && typeof error === 'object' ? (error as Record<string, unknown>) : {};
  const message = error instanceof Error ? error.message : String(error);
  if (typeof record.statusCode === 'number') {
    return new KubeApiError(
      record.statusCode,
      message.replace(/\s+/g, ''),
      `watch ${path}: HTTP ${record.statusCode} ${message}`,
      undefined,
    );
  }
  const what = record.name === 'TimeoutError' ? `idle for ${idleMs} ms` : message;
  return new KubeUnavailableError(`watch ${path}: ${what}`, { cause: error });
}
