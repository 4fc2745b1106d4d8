// How the agent selects its Leases: by the field spec.worker (the Lease CRD's selectableFields,
// cheaper for kube-apiserver than a label; ADR 0018), or, when the cluster's Lease CRD is older
// and does not declare that field, by the worker label as before. Decided once, at start.
import { LEASE_WORKER_FIELD, WORKER_LABEL } from '../../api/index.js';
import {
  isTransient,
  KubeApiError,
  retryWithBackoff,
  type Clock,
  type KubeClient,
  type Logger,
} from '../../runtime/index.js';

export type LeaseSelector = { fieldSelector: string } | { labelSelector: string };

export function fieldSelectorFor(worker: string): LeaseSelector {
  return { fieldSelector: `${LEASE_WORKER_FIELD}=${worker}` };
}

export function labelSelectorFor(worker: string): LeaseSelector {
  return { labelSelector: `${WORKER_LABEL}=${worker}` };
}

/**
 * Whether a list's error says the Lease CRD does not declare spec.worker selectable: kube-apiserver
 * answers 400 BadRequest, `field label not supported: spec.worker`.
 */
export function isFieldNotSelectable(error: unknown): boolean {
  return (
    error instanceof KubeApiError &&
    error.status === 400 &&
    error.message.includes('field label not supported') &&
    error.message.includes(LEASE_WORKER_FIELD)
  );
}

/**
 * Lists one Lease by the field: served, the field selector; refused as above, the label (warned
 * once, with the fix). An API server restarting is waited out as for the Worker's registration;
 * any other failure keeps the field selector, which the informer then retries.
 */
export async function chooseLeaseSelector(options: {
  client: KubeClient;
  /** The Leases' collection (simlockPath('lease')). */
  path: string;
  worker: string;
  clock: Clock;
  log: Logger;
}): Promise<LeaseSelector> {
  const { client, path, worker, clock, log } = options;
  const selector = fieldSelectorFor(worker);
  try {
    await retryWithBackoff(() => client.get(path, { query: { ...selector, limit: 1 } }), {
      clock,
      attempts: 10,
      retryable: isTransient,
    });
    return selector;
  } catch (error) {
    if (!isFieldNotSelectable(error)) return selector;
    log.warn('the Lease CRD lacks a selectable field; watching Leases by label instead', {
      field: LEASE_WORKER_FIELD,
      label: WORKER_LABEL,
      fix: "apply the chart's CRDs (charts/simlock/crds), as for every upgrade",
      error,
    });
    return labelSelectorFor(worker);
  }
}
