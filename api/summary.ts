// The one-line summary of a waiting request's reasons, for the printer column.
import type { WorkerReason } from './schemas.js';
import { WAITING_REASONS } from './reasons.js';

/** "3 workers: 1 drained, 2 full"; counts in the reasons' contract order. */
export function summarizeReasons(workers: readonly Pick<WorkerReason, 'reason'>[]): string {
  if (workers.length === 0) return 'no workers';
  const counts = new Map<string, number>();
  for (const { reason } of workers) counts.set(reason, (counts.get(reason) ?? 0) + 1);
  const parts = WAITING_REASONS.filter((reason) => counts.has(reason)).map(
    (reason) => `${counts.get(reason)} ${reason}`,
  );
  const noun = workers.length === 1 ? 'worker' : 'workers';
  return `${workers.length} ${noun}: ${parts.join(', ')}`;
}
