// What a waiting lease() reports to its onProgress: where the request is, and for each worker
// why it does not take it, by its label and in the contract's words (api/reasons.ts). Pure.
import {
  reasonText,
  type CapacityReason,
  type LeaseRequestObject,
  type RequestPhase,
  type WaitingReason,
  type WorkerObject,
} from '../api/index.js';

export interface WorkerWait {
  /** The Worker's name. */
  worker: string;
  /** How people know it (spec.label), else its name. */
  label: string;
  reason: WaitingReason;
  capacityReason?: CapacityReason | undefined;
  /** The reason as people read it, e.g. "Full: running limit for iOS". */
  text: string;
}

export interface LeaseProgress {
  /** The LeaseRequest's name. */
  request: string;
  phase: RequestPhase;
  /** Place in the queue (0 is next) while Waiting. */
  position?: number | undefined;
  /** The worker it was dispatched to, once Dispatched or Granted. */
  worker?: string | undefined;
  /** One entry per known worker while Waiting, in worker name order. */
  workers: WorkerWait[];
}

/** Names workers by label, as the plugin and the console do. */
export function workerLabels(workers: readonly WorkerObject[]): (name: string) => string {
  const labels = new Map<string, string>();
  for (const worker of workers) {
    const label = worker.spec.label;
    if (label !== undefined && label.length > 0) labels.set(worker.metadata.name, label);
  }
  return (name) => labels.get(name) ?? name;
}

export function progressOf(
  request: LeaseRequestObject,
  label: (worker: string) => string,
): LeaseProgress {
  const status = request.status;
  const phase = status?.phase ?? 'Pending';
  return {
    request: request.metadata.name,
    phase,
    ...(phase === 'Waiting' && status?.position !== undefined ? { position: status.position } : {}),
    ...(status?.worker !== undefined ? { worker: label(status.worker) } : {}),
    workers:
      phase === 'Waiting'
        ? (status?.workers ?? []).map((entry) => ({
            worker: entry.worker,
            label: label(entry.worker),
            reason: entry.reason,
            ...(entry.capacityReason !== undefined ? { capacityReason: entry.capacityReason } : {}),
            text: reasonText(entry, request.spec.platform),
          }))
        : [],
  };
}

/** The same, in one line: "queued at 1: worker-a: Full: running limit for iOS; worker-b: Drained". */
export function progressLine(progress: LeaseProgress): string {
  switch (progress.phase) {
    case 'Waiting': {
      const reasons = progress.workers.map((entry) => `${entry.label}: ${entry.text}`).join('; ');
      return `${progress.request} queued at ${progress.position ?? '-'}${reasons ? `: ${reasons}` : ''}`;
    }
    case 'Dispatched':
      return `${progress.request} dispatched to ${progress.worker ?? '-'}`;
    default:
      return `${progress.request} ${progress.phase.toLowerCase()}`;
  }
}
