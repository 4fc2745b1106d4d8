// The agent's Worker: registered (created, or adopted with its labels and label brought up to date)
// when the agent starts, and its status kept equal to the core's view, one write at a time with the
// latest view winning, retried with backoff by its work queue.
import { API_VERSION, RESOURCES, type WorkerStatus } from '../../api/index.js';
import {
  WorkQueue,
  isNotFound,
  mergePatch,
  simlockPath,
  type Clock,
  type KubeClient,
  type Logger,
  type WorkQueueMetrics,
} from '../../runtime/index.js';
import type { AgentConfig } from '../config.js';
import type { AgentCore } from '../core.js';

export interface WorkerWriterOptions {
  client: KubeClient;
  core: AgentCore;
  config: AgentConfig;
  clock: Clock;
  log: Logger;
  queueMetrics?: WorkQueueMetrics | undefined;
}

export class WorkerWriter {
  private written: WorkerStatus | undefined;
  /** One key, `status`: the Worker status is written one write at a time, the latest view winning. */
  private readonly statusQueue: WorkQueue<'status'>;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: WorkerWriterOptions) {
    this.statusQueue = new WorkQueue({
      name: 'worker-status',
      clock: options.clock,
      observer: options.queueMetrics?.observer('Worker'),
      reconcile: () => this.writeLatestStatus(),
    });
  }

  private get name(): string {
    return this.options.config.name;
  }

  /** Writes every new view from now on, and the current one. */
  follow(): void {
    this.unsubscribe = this.options.core.views.add(() => this.statusQueue.add('status'));
  }

  /** Writes the current view (once the core has one). */
  writeNow(): void {
    this.statusQueue.add('status');
  }

  /** Stops following; the last view is written before it resolves (as long as the API takes it). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.statusQueue.idle();
    await this.statusQueue.shutDown();
  }

  async register(): Promise<void> {
    const { client, config } = this.options;
    const path = simlockPath('worker', { name: config.name });
    const labels = config.labels;
    try {
      const existing = (await client.get(path)) as {
        spec?: { label?: string };
        metadata?: { labels?: Record<string, string> };
      };
      const labelsMissing = Object.entries(labels).some(
        ([key, value]) => existing.metadata?.labels?.[key] !== value,
      );
      const labelChanged = config.label !== undefined && existing.spec?.label !== config.label;
      if (labelsMissing || labelChanged) {
        await client.patch(path, {
          ...(labelsMissing ? { metadata: { labels } } : {}),
          ...(labelChanged ? { spec: { label: config.label } } : {}),
        });
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await client.create(simlockPath('worker'), {
        apiVersion: API_VERSION,
        kind: RESOURCES.worker.kind,
        metadata: { name: config.name, labels },
        spec: { drained: false, ...(config.label !== undefined ? { label: config.label } : {}) },
      });
    }
  }

  /**
   * Writes the view as Worker status. A failure throws: the queue retries with backoff, and a
   * newer view asked for meanwhile is the one the retry writes.
   */
  private async writeLatestStatus(): Promise<void> {
    const status = this.options.core.status();
    const previous = this.written;
    if (previous && JSON.stringify(previous) === JSON.stringify(status)) return;
    try {
      await this.options.client.patch(
        simlockPath('worker', { name: this.name, subresource: 'status' }),
        { status: mergePatch(previous, status) },
      );
    } catch (error) {
      this.options.log.warn('worker status write failed; retrying', { error });
      throw error;
    }
    this.written = status;
    this.statusQueue.forget('status');
  }
}
