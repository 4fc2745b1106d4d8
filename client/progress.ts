// What a waiting lease() reports to its onProgress: where the request is, for each worker why it
// does not take it, by its label and in the contract's words (api/reasons.ts), and, while the
// worker makes or boots the device, the stage and its estimate (api/grant-progress.ts). Pure.
import {
  grantEstimateText,
  reasonText,
  reasonsByWorker,
  type CapacityReason,
  type GrantStage,
  type LeaseRequestObject,
  type RequestPhase,
  type WaitingReason,
  type WorkerObject,
} from '../api/index.js';
import { askedDevice, estimateText, stageText } from '../runtime/index.js';

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
  /**
   * While Waiting, the controller's estimate (`status.estimate`): when it should be granted (an
   * ISO time), absent when there is no basis; how that was worked out; and the two as people read
   * them, "about 3m (2 leases of iPhone 16 end before)" or "no estimate: <why>".
   */
  estimatedGrantAt?: string | undefined;
  estimateBasis?: string | undefined;
  estimateText?: string | undefined;
  /**
   * While Dispatched and the worker makes or boots the device (`status.progress`): `provisioning`,
   * then `booting`. Absent when no device has to be made or started.
   */
  stage?: GrantStage | undefined;
  /** When the stage began (an ISO time). */
  stageSince?: string | undefined;
  /** How long the stage should take on that worker, by its agent's measure; absent without one. */
  estimatedSeconds?: number | undefined;
  /** The stage as people read it: "booting iPhone 16 on worker-a, about 25 s". */
  stageText?: string | undefined;
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
  now: number = Date.now(),
): LeaseProgress {
  const status = request.status;
  const phase = status?.phase ?? 'Pending';
  const grant = phase === 'Dispatched' ? status?.progress : undefined;
  const estimate = grant ? estimateText(grant) : undefined;
  const wait = phase === 'Waiting' ? status?.estimate : undefined;
  return {
    request: request.metadata.name,
    phase,
    ...(phase === 'Waiting' && status?.position !== undefined ? { position: status.position } : {}),
    ...(status?.worker !== undefined ? { worker: label(status.worker) } : {}),
    workers:
      phase === 'Waiting'
        ? reasonsByWorker(status).map((entry) => ({
            worker: entry.worker,
            label: label(entry.worker),
            reason: entry.reason,
            ...(entry.capacityReason !== undefined ? { capacityReason: entry.capacityReason } : {}),
            text: reasonText(entry, request.spec.platform),
          }))
        : [],
    ...(wait
      ? {
          ...(wait.grantAt !== undefined ? { estimatedGrantAt: wait.grantAt } : {}),
          estimateBasis: wait.basis,
          estimateText: grantEstimateText(wait, now),
        }
      : {}),
    ...(grant
      ? {
          stage: grant.stage,
          stageSince: grant.since,
          ...(grant.estimatedSeconds !== undefined
            ? { estimatedSeconds: grant.estimatedSeconds }
            : {}),
          stageText:
            stageText(grant, {
              device: askedDevice(request.spec, grant),
              worker: label(status?.worker ?? '-'),
            }) + (estimate !== undefined ? `, ${estimate}` : ''),
        }
      : {}),
  };
}

/**
 * The same, in one line: "queued at 1, about 3m (1 lease of iPhone 16 ends before): worker-a:
 * Full: running limit for iOS; worker-b: Drained";
 * while the worker makes or boots the device, "booting iPhone 16 on worker-a, about 25 s".
 */
export function progressLine(progress: LeaseProgress): string {
  switch (progress.phase) {
    case 'Waiting': {
      const reasons = progress.workers.map((entry) => `${entry.label}: ${entry.text}`).join('; ');
      const estimate = progress.estimateText !== undefined ? `, ${progress.estimateText}` : '';
      return `${progress.request} queued at ${progress.position ?? '-'}${estimate}${reasons ? `: ${reasons}` : ''}`;
    }
    case 'Dispatched':
      return progress.stageText !== undefined
        ? `${progress.request} ${progress.stageText}`
        : `${progress.request} dispatched to ${progress.worker ?? '-'}`;
    default:
      return `${progress.request} ${progress.phase.toLowerCase()}`;
  }
}
