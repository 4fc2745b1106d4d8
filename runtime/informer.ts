// An informer: list, then watch from the list's resourceVersion, keeping a store of objects and
// telling a handler about every add, update and delete. It never stops on its own: a 410 Gone
// relists, any other failure waits with capped exponential backoff and relists (client-node's
// informer, in 2.x too, stops on such errors: ADR 0013). A relist delivers the difference against
// the store, so handlers see each change once and must only be idempotent across restarts of the
// process. An object deleted and made again under its name while no watch was open (seen only by
// a relist, as a new uid) is delivered as what it is: a delete of the old one and an add of the
// new, never as an update of one into the other (a handler would take the new object's news as
// the old one's, e.g. an agent would never reclaim the device of a Lease deleted meanwhile).
import type { KubeClient } from './kube-client.js';
import { KubeApiError } from './kube-client.js';

export interface KubeObject {
  metadata: { name: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export type InformerEvent<T> =
  | { type: 'added'; object: T }
  | { type: 'updated'; object: T; previous: T }
  | { type: 'deleted'; object: T };

export interface InformerOptions {
  /** Collection path, e.g. /apis/simlock.dev/v1alpha1/workers. */
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Server-side watch timeout; the watch is reopened after it. */
  watchTimeoutSeconds?: number;
  onError?: (error: unknown) => void;
  /** After each list that succeeded (the first, and each relist after a failure or a 410). */
  onListed?: () => void;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
}

export function objectKey(object: KubeObject): string {
  return object.metadata.namespace
    ? `${object.metadata.namespace}/${object.metadata.name}`
    : object.metadata.name;
}

function isKubeObject(value: unknown): value is KubeObject {
  if (value === null || typeof value !== 'object') return false;
  const metadata = (value as { metadata?: unknown }).metadata;
  return (
    metadata !== null &&
    typeof metadata === 'object' &&
    typeof (metadata as { name?: unknown }).name === 'string'
  );
}

export class Informer {
  private readonly store = new Map<string, KubeObject>();
  private readonly handlers: ((event: InformerEvent<KubeObject>) => void)[] = [];
  private readonly controller = new AbortController();
  private syncedOnce = false;
  private readonly syncWaiters: (() => void)[] = [];
  private running: Promise<void> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly options: InformerOptions,
  ) {}

  on(handler: (event: InformerEvent<KubeObject>) => void): void {
    this.handlers.push(handler);
  }

  list(): KubeObject[] {
    return [...this.store.values()];
  }

  get(key: string): KubeObject | undefined {
    return this.store.get(key);
  }

  /**
   * The answer to a write of our own, taken before its watch event comes (client-go's mutation
   * cache): kept only while the store still holds the version the write was made onto, so that
   * an event already newer is never replaced by it. What reads the store sees our write at once.
   */
  assume(answer: unknown, basedOn: string | undefined): void {
    if (!isKubeObject(answer) || basedOn === undefined) return;
    if (this.store.get(objectKey(answer))?.metadata.resourceVersion !== basedOn) return;
    this.upsert(answer);
  }

  get synced(): boolean {
    return this.syncedOnce;
  }

  start(): void {
    this.running ??= this.run();
  }

  /** Resolves once the first list has been delivered. */
  waitForSync(): Promise<void> {
    if (this.syncedOnce) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.controller.abort();
    await this.running;
  }

  private emit(event: InformerEvent<KubeObject>): void {
    for (const handler of this.handlers) handler(event);
  }

  private upsert(object: KubeObject): void {
    const key = objectKey(object);
    const previous = this.store.get(key);
    this.store.set(key, object);
    if (previous && previous.metadata.uid !== object.metadata.uid) {
      this.emit({ type: 'deleted', object: previous });
      this.emit({ type: 'added', object });
    } else if (!previous) this.emit({ type: 'added', object });
    else if (previous.metadata.resourceVersion !== object.metadata.resourceVersion) {
      this.emit({ type: 'updated', object, previous });
    }
  }

  private remove(object: KubeObject): void {
    const key = objectKey(object);
    const known = this.store.get(key);
    if (!known) return;
    this.store.delete(key);
    this.emit({ type: 'deleted', object: known });
  }

  /** Lists, replacing the store: delivers adds and updates, and deletes for what is gone. */
  private async relist(): Promise<string> {
    const body = (await this.client.get(this.options.path, {
      query: {
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
      },
      signal: this.controller.signal,
    })) as { items?: unknown[]; metadata?: { resourceVersion?: string } };
    const seen = new Set<string>();
    for (const item of body.items ?? []) {
      if (!isKubeObject(item)) continue;
      seen.add(objectKey(item));
      this.upsert(item);
    }
    for (const [key, object] of [...this.store]) if (!seen.has(key)) this.remove(object);
    this.options.onListed?.();
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      for (const resolve of this.syncWaiters.splice(0)) resolve();
    }
    return body.metadata?.resourceVersion ?? '';
  }

  private async run(): Promise<void> {
    const signal = this.controller.signal;
    let backoffMs = this.options.initialBackoffMs ?? 200;
    const maxBackoffMs = this.options.maxBackoffMs ?? 10_000;
    let resourceVersion: string | undefined;
    // Each turn: relist when we have no resourceVersion, then watch from it until the server ends
    // the watch (keep the version and watch again), says 410 (relist), or fails (back off, relist).
    while (!signal.aborted) {
      try {
        resourceVersion ??= await this.relist();
        let expired = false;
        await this.client.watch(
          this.options.path,
          {
            resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.options.watchTimeoutSeconds ?? 300,
            labelSelector: this.options.labelSelector,
            fieldSelector: this.options.fieldSelector,
          },
          (event) => {
            if (event.type === 'ERROR') {
              expired = true;
              return;
            }
            if (!isKubeObject(event.object)) return;
            const version = event.object.metadata.resourceVersion;
            if (event.type === 'BOOKMARK') {
              if (version) resourceVersion = version;
              return;
            }
            if (version) resourceVersion = version;
            if (event.type === 'DELETED') this.remove(event.object);
            else this.upsert(event.object);
          },
          signal,
        );
        if (expired) resourceVersion = undefined;
        backoffMs = this.options.initialBackoffMs ?? 200;
      } catch (error) {
        if (signal.aborted) break;
        resourceVersion = undefined;
        if (!(error instanceof KubeApiError && error.status === 410)) {
          this.options.onError?.(error);
          await sleep(backoffMs, signal);
          backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
        }
      }
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    // The listener goes with the timer: an informer that backs off often (an API server
    // restarting) must not pile listeners onto its one signal.
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
