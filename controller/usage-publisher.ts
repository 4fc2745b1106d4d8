// Publishes the usage history (usage-history.ts) into the ConfigMap `simlock-usage` of the system
// namespace, at most once per interval (a minute by default), for the console's Usage page (ADR
// 0027). Only the leader runs it (it lives in the reconciler). On start it takes up what the
// last leader published, so a restart or a failover loses only the minutes since that write. Its
// timer is a key in a work queue, as every timer of the controller is.
import {
  USAGE_CONFIGMAP,
  USAGE_DATA_KEY,
  USAGE_MAX_BYTES,
  UsageHistoryDocument,
} from '../api/index.js';
import {
  isNotFound,
  WorkQueue,
  type Clock,
  type KubeClient,
  type Logger,
} from '../runtime/index.js';
import type { UsageHistory } from './usage-history.js';

export interface UsagePublisherOptions {
  client: KubeClient;
  clock: Clock;
  log: Logger;
  /** The system namespace (--namespace). */
  namespace: string;
  history: UsageHistory;
  intervalMs: number;
  /** Brings the history up to now (the device time since the views last changed). */
  beforePublish: () => void;
}

export class UsagePublisher {
  private readonly queue: WorkQueue<'publish'>;
  private readonly path: string;

  constructor(private readonly options: UsagePublisherOptions) {
    this.path = `/api/v1/namespaces/${options.namespace}/configmaps/${USAGE_CONFIGMAP}`;
    this.queue = new WorkQueue({
      name: 'usage',
      clock: options.clock,
      reconcile: async () => {
        await this.publish();
        return { requeueAfterMs: options.intervalMs };
      },
    });
  }

  /** Takes up the published history, then publishes every interval. */
  async start(): Promise<void> {
    await this.adopt();
    this.queue.addAfter('publish', this.options.intervalMs);
  }

  async stop(): Promise<void> {
    await this.queue.shutDown();
  }

  private async adopt(): Promise<void> {
    try {
      const map = (await this.options.client.get(this.path)) as { data?: Record<string, string> };
      const text = map.data?.[USAGE_DATA_KEY];
      if (text === undefined) return;
      const parsed = UsageHistoryDocument.safeParse(JSON.parse(text));
      if (parsed.success) this.options.history.adopt(parsed.data, this.options.clock.now());
      else
        this.options.log.warn('usage history not taken up: it does not parse', { path: this.path });
    } catch (error) {
      if (!isNotFound(error))
        this.options.log.warn('usage history not taken up', { path: this.path, error });
    }
  }

  private async publish(): Promise<void> {
    this.options.beforePublish();
    const document = this.options.history.document(this.options.clock.now());
    let text = JSON.stringify(document);
    // A fleet of very many models: the oldest buckets go first, so the ConfigMap stays writable.
    while (text.length > USAGE_MAX_BYTES && document.buckets.length > 1) {
      document.buckets.shift();
      document.since = new Date((document.buckets[0]?.start ?? 0) * 1000).toISOString();
      text = JSON.stringify(document);
    }
    const body = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: USAGE_CONFIGMAP,
        namespace: this.options.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'simlock-controller' },
      },
      data: { [USAGE_DATA_KEY]: text },
    };
    try {
      try {
        // No resourceVersion: only the leader writes it, and what it writes is its whole history.
        await this.options.client.replace(this.path, body);
      } catch (error) {
        if (!isNotFound(error)) throw error;
        await this.options.client.create(
          `/api/v1/namespaces/${this.options.namespace}/configmaps`,
          body,
        );
      }
    } catch (error) {
      this.options.log.warn('usage history not published; trying again', { error });
      throw error;
    }
  }
}
