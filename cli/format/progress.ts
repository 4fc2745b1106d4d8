// What `lease` shows while it waits, and the line it prints on a grant (DESIGN.md §7.2):
// `Lease <name>: <device name> <device id> (physical) on <worker label or name>`.
import {
  grantEstimateText,
  reasonLine,
  reasonsByWorker,
  type LeaseRequestObject,
} from '../../api/index.js';
import { askedDevice } from '../../runtime/index.js';
import { stageLine, waitingSeconds, type WorkerDisplay } from './requests.js';

/**
 * The waiting block: where the request is, how long it has waited, and under it one line per
 * worker with its reason (the same lines as `list --requests`), with the controller's estimate
 * (`queued at 2, waiting 40s, about 3m (2 leases of iPhone 16 end before; 1 ahead of you)`). Dispatched to a worker that makes
 * or boots the device: the stage and its estimate,
 * `Request ci-5: booting iPhone 16 on worker-a (about 25 s), waiting 41s`.
 */
export function progressLines(
  request: LeaseRequestObject,
  options: { now: number; worker: WorkerDisplay },
): string[] {
  const { status, spec, metadata } = request;
  const since = status?.queuedAt ?? metadata.creationTimestamp;
  const waited = `waiting ${waitingSeconds(since, options.now)}s`;
  switch (status?.phase) {
    case 'Waiting': {
      const estimate = status.estimate
        ? `, ${grantEstimateText(status.estimate, options.now)}`
        : '';
      const lines = [
        `Request ${metadata.name}: queued at ${status.position ?? '-'}, ${waited}${estimate}`,
      ];
      for (const entry of reasonsByWorker(status)) {
        lines.push(`  ${options.worker(entry.worker)}: ${reasonLine(entry, spec.platform)}`);
      }
      return lines;
    }
    case 'Dispatched': {
      const worker = options.worker(status.worker ?? '-');
      const where = status.progress
        ? stageLine(status.progress, { device: askedDevice(spec, status.progress), worker })
        : `dispatched to ${worker}`;
      return [`Request ${metadata.name}: ${where}, ${waited}`];
    }
    case 'Granted':
    case 'Failed':
    case 'Released':
      // The end: the grant line or the error says it, not a progress line.
      return [];
    default:
      return [`Request ${metadata.name}: pending, ${waited}`];
  }
}

/** Changes when anything but the waiting time changes: a plain (non-TTY) log prints only then. */
export function progressSignature(request: LeaseRequestObject): string {
  const status = request.status;
  return JSON.stringify([
    status?.phase ?? 'Pending',
    status?.position,
    status?.worker,
    status?.workers ?? [],
    status?.phase === 'Waiting' ? (status.estimate ?? null) : null,
    status?.phase === 'Dispatched' ? (status.progress ?? null) : null,
  ]);
}

/**
 * The grant line; `(physical)` only for a physical device. The lease is named as its holder knows
 * it, by its request: its Lease's own name is the request's UID, in the worker's namespace (ADR 0034).
 */
export function grantLine(request: LeaseRequestObject, worker: WorkerDisplay): string {
  const status = request.status;
  const name = request.metadata.name;
  const device = status?.device;
  const what = device
    ? `${device.name} ${device.id}${device.physical ? ' (physical)' : ''}`
    : 'a device';
  return `Lease ${name}: ${what} on ${worker(status?.worker ?? '-')}`;
}

/**
 * Terminal output that replaces the block drawn last (`previousLines` lines) with `lines`: move to
 * the first line of the old block, clear to the end of the screen, draw. Lines are cut to the
 * terminal's width so that none wraps and the count of lines stays true.
 */
export function repaint(previousLines: number, lines: readonly string[], columns?: number): string {
  const move = previousLines > 0 ? `\x1b[${previousLines}F\x1b[J` : '';
  const width = columns !== undefined && columns > 1 ? columns - 1 : undefined;
  const cut = (line: string) =>
    width !== undefined && line.length > width ? line.slice(0, width - 1) + '…' : line;
  return move + lines.map((line) => cut(line) + '\n').join('');
}
