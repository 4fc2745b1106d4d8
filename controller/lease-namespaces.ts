// A worker's Lease namespace (ADR 0034), made by the controller when it first sees the Worker
// (off the grant's path: in the bookkeeping lane), and again at a dispatch that finds it missing
// (the Lease create answered NotFound). Labelled with its worker and owned by its Worker, so that
// deleting the Worker deletes the namespace (and what is left in it). A namespace already there
// (made by another controller, or before a restart) is taken as it is; those there at start are
// found with one list, not made again.
import {
  API_VERSION,
  ObjectMeta,
  RESOURCES,
  WORKER_LABEL,
  leaseNamespaceOf,
} from '../api/index.js';
import { isAlreadyExists, type KubeClient, type Logger } from '../runtime/index.js';
import type { WritePriority, WriteQueue } from './write-queue.js';

export interface LeaseNamespacesOptions {
  client: KubeClient;
  writes: WriteQueue;
  log: Logger;
  /** The UID of the Worker of this name, as our informer has it. */
  workerUid: (name: string) => string | undefined;
}

export class LeaseNamespaces {
  /** The workers whose namespace this process made or found. */
  private readonly made = new Set<string>();

  constructor(private readonly options: LeaseNamespacesOptions) {}

  /**
   * The workers' Lease namespaces there already, found with one list at start: a controller that
   * starts (a restart, a new leader) makes none of them again. Without it, every start sent one
   * create per Worker (answered AlreadyExists): a thousand writes at a thousand workers, at the
   * client's rate, ahead of the first dispatches. A list that fails leaves the creates to do it.
   */
  async findExisting(): Promise<void> {
    try {
      const list = (await this.options.client.get('/api/v1/namespaces', {
        query: { labelSelector: WORKER_LABEL },
      })) as { items?: { metadata?: unknown }[] } | undefined;
      for (const item of list?.items ?? []) {
        const metadata = ObjectMeta.safeParse(item.metadata);
        const worker = metadata.data?.labels?.[WORKER_LABEL];
        if (worker !== undefined && metadata.data?.name === leaseNamespaceOf(worker))
          this.made.add(worker);
      }
    } catch (error) {
      this.options.log.warn("could not list the workers' Lease namespaces; making them", { error });
    }
  }

  /** A Worker seen: its namespace made once, unless this process made or found it already. */
  workerSeen(worker: string): void {
    if (this.made.has(worker)) return;
    this.made.add(worker);
    this.make(worker, 'bookkeeping').catch((error: unknown) => {
      // Its first dispatch makes it then.
      this.made.delete(worker);
      this.options.log.warn("could not make a worker's Lease namespace", { worker, error });
    });
  }

  /** A Worker deleted: its namespace goes with it, and one made again is made anew. */
  workerGone(worker: string): void {
    this.made.delete(worker);
  }

  /** Makes `worker`'s Lease namespace; throws when the create failed for another reason. */
  async make(worker: string, lane: WritePriority = 'dispatch'): Promise<void> {
    const uid = this.options.workerUid(worker);
    const namespace = {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name: leaseNamespaceOf(worker),
        labels: { [WORKER_LABEL]: worker },
        ...(uid === undefined
          ? {}
          : {
              ownerReferences: [
                { apiVersion: API_VERSION, kind: RESOURCES.worker.kind, name: worker, uid },
              ],
            }),
      },
    };
    try {
      await this.options.writes.run(lane, () =>
        this.options.client.create('/api/v1/namespaces', namespace),
      );
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
}
