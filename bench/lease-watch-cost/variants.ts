// How the agents could watch their Leases, as the Lease-watch benchmark compares them:
//   label  every agent watches with a label selector on simlock.dev/worker (as agents did before
//          ADR 0018, and do on an older CRD), on the Lease CRD without selectableFields
//   field  every agent watches with a field selector on spec.worker (as they do), on the Lease
//          CRD with selectableFields: [.spec.worker] (Kubernetes 1.32+), as generated
//   namespace  every worker's Leases live in a namespace of its own, which its agent watches with no
//          selector: the watch cache keys watchers by namespace, so an event is offered to one watch
//          (the candidate of issue 36 point 2), on the CRD without selectableFields
//   none   no agent watches: the writes alone, what the watches add to is measured against it
import { WORKER_LABEL } from '../../api/index.js';
import type { Crd } from '../harness/index.js';

export const WATCH_VARIANTS = ['label', 'field', 'namespace', 'none'] as const;
export type WatchVariant = (typeof WATCH_VARIANTS)[number];

const SELECTABLE_WORKER = { jsonPath: '.spec.worker' };

/**
 * The Lease CRD a variant runs on: field needs spec.worker selectable; the others run without
 * selectableFields, as the label figures were measured before the CRD declared it.
 */
export function leaseCrdFor(generated: Crd, variant: WatchVariant): Crd {
  const copy = structuredClone(generated);
  for (const version of copy.spec.versions) {
    if (variant === 'field') version.selectableFields = [SELECTABLE_WORKER];
    else delete version.selectableFields;
  }
  return copy;
}

/** Whether the CRD makes spec.worker selectable (what a field selector needs). */
export function selectsWorkerField(crd: Crd): boolean {
  return crd.spec.versions.every((version) =>
    JSON.stringify(version.selectableFields ?? []).includes('"jsonPath":".spec.worker"'),
  );
}

/** The watch query one agent would open under a variant (none: no watch). */
export function watchQuery(
  variant: WatchVariant,
  worker: string,
): Record<string, string> | undefined {
  switch (variant) {
    case 'label':
      return { labelSelector: `${WORKER_LABEL}=${worker}` };
    case 'field':
      return { fieldSelector: `spec.worker=${worker}` };
    case 'namespace':
      return {};
    case 'none':
      return undefined;
  }
}

/** The namespace a variant puts a worker's Leases in: its own under `namespace`, else the shared one. */
export function leaseNamespaceOf(variant: WatchVariant, worker: string, shared: string): string {
  return variant === 'namespace' ? `${shared}-${worker}` : shared;
}
