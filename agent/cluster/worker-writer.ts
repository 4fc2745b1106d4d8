// The agent's Worker: registered (created, or adopted with its labels and label brought up to date)
// when the agent starts, and its status kept equal to the core's view, one write at a time with the
// latest view winning, retried with backoff by its work queue. Each write is a PUT of the whole
// status onto the Worker's version as last written or read (ADR 0014): a Worker is the largest of
// our objects, and a merge patch of it costs the API server an encode and a decode of all of it.
// A 409 (an operator drained it meanwhile) reads the Worker again and writes onto that.
import { API_VERSION, RESOURCES, type WorkerStatus } from '../../api/index.js';
import {
  WorkQueue,
  isNotFound,
  resourceVersionOf,
  simlockPath,
  writeStatusOnto,
  type Clock,
  type KubeClient,
  type Logger,
  type WorkQueueMetrics,
} from '../../runtime/index.js';
import type { AgentConfig } from '../config.js';
import type { AgentCore } from '../core.js';
import { UnquarantineWatch } from './unquarantine-watch.js';

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
  /** The Worker's resourceVersion as last read or written: the next status write is made onto it. */
  private version: string | undefined;
  /** One key, `status`: the Worker status is written one write at a time, the latest view winning. */
  private readonly statusQueue: WorkQueue<'status'>;
  private unsubscribe: (() => void) | undefined;
  /** The operators' spec.unquarantine, read off the Worker as it changes. */
  private readonly unquarantines: UnquarantineWatch;

  constructor(private readonly options: WorkerWriterOptions) {
    this.statusQueue = new WorkQueue({
      name: 'worker-status',
      clock: options.clock,
      observer: options.queueMetrics?.observer('Worker'),
      reconcile: () => this.writeLatestStatus(),
    });
    this.unquarantines = new UnquarantineWatch(options.client, {
      worker: options.config.name,
      core: options.core,
      log: options.log,
    });
  }

  private get name(): string {
    return this.options.config.name;
  }

  /** Writes every new view from now on, and the current one. */
  follow(): void {
    this.unsubscribe = this.options.core.views.add(() => this.statusQueue.add('status'));
    this.unquarantines.start();
  }

  /** Writes the current view (once the core has one). */
  writeNow(): void {
    this.statusQueue.add('status');
  }

  /** Stops following; the last view is written before it resolves (as long as the API takes it). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.unquarantines.stop();
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
      this.version = resourceVersionOf(existing);
      const labelsMissing = Object.entries(labels).some(
        ([key, value]) => existing.metadata?.labels?.[key] !== value,
      );
      const labelChanged = config.label !== undefined && existing.spec?.label !== config.label;
      if (labelsMissing || labelChanged) {
        const patched = await client.patch(path, {
          ...(labelsMissing ? { metadata: { labels } } : {}),
          ...(labelChanged ? { spec: { label: config.label } } : {}),
        });
        this.version = resourceVersionOf(patched);
      }
    } catch (error) {
      if (!isNotFound(error)) throw error;
      const created = await client.create(simlockPath('worker'), {
        apiVersion: API_VERSION,
        kind: RESOURCES.worker.kind,
        metadata: { name: config.name, labels },
        spec: { drained: false, ...(config.label !== undefined ? { label: config.label } : {}) },
      });
      this.version = resourceVersionOf(created);
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
      const outcome = await writeStatusOnto({
        client: this.options.client,
        target: { resource: 'worker', name: this.name },
        version: this.version,
        status,
        rereads: 2,
      });
      this.version = outcome.version;
    } catch (error) {
      // The next try reads the Worker first: after a conflict, or if it was deleted meanwhile.
      this.version = undefined;
      this.options.log.warn('worker status write failed; retrying', { error });
      throw error;
    }
    this.written = status;
    this.statusQueue.forget('status');
  }
}
