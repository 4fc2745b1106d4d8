// A worker's Lease namespace (ADR 0034), made by the controller the first time a Lease is
// dispatched there and found missing: labelled with its worker and owned by its Worker, so that
// deleting the Worker deletes the namespace (and what is left in it). A namespace already there
// (made by another controller, or by the chart) is taken as it is.
import { API_VERSION, RESOURCES, WORKER_LABEL, leaseNamespaceOf } from '../api/index.js';
import { isAlreadyExists, type KubeClient } from '../runtime/index.js';
import type { WriteQueue } from './write-queue.js';

export interface LeaseNamespacesOptions {
  client: KubeClient;
  writes: WriteQueue;
  /** The UID of the Worker of this name, as our informer has it. */
  workerUid: (name: string) => string | undefined;
}

export class LeaseNamespaces {
  constructor(private readonly options: LeaseNamespacesOptions) {}

  /** Makes `worker`'s Lease namespace; throws when the create failed for another reason. */
  async make(worker: string): Promise<void> {
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
      await this.options.writes.run('dispatch', () =>
        this.options.client.create('/api/v1/namespaces', namespace),
      );
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  }
}
