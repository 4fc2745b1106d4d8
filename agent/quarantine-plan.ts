// When a quarantined device is tried again, and what follows a failed try (pure; the retrier in
// quarantine-retrier.ts carries it out on the injected clock). A virtual device is retried after
// each backoff in turn (config `quarantine.retryBackoffSeconds`, by default 1, 5 and 30 minutes);
// once they are used up, a device the agent made is deleted (the planner makes a new one when a
// request needs it) and any other waits for an operator. A physical device is never retried here:
// it waits for an operator from the start, as before (a failed reset quarantines it).

export interface QuarantineSettings {
  /** The wait before each retry, in order; their number is the number of retries. */
  backoffMs: readonly number[];
}

/** A quarantine as the inventory keeps it. */
export interface QuarantineRecord {
  /** Why it was taken out of service. */
  cause: string;
  sinceMs: number;
  /** Retries made so far (each a boot and a health check). */
  retries: number;
  /**
   * When the next retry falls due; absent while one runs (the device machine's `retrying`), and
   * once it waits for an operator (`awaitingOperator`, or no retries apply).
   */
  nextRetryAtMs?: number;
  /** What the last retry saw fail. */
  lastFailure?: string;
}

/** The retries a new quarantine gets: the first one's time, or none (it waits for an operator). */
export function firstRetry(
  sinceMs: number,
  physical: boolean,
  settings: QuarantineSettings,
): Pick<QuarantineRecord, 'nextRetryAtMs'> {
  const wait = settings.backoffMs[0];
  if (physical || wait === undefined) return {};
  return { nextRetryAtMs: sinceMs + wait };
}

export type AfterFailedRetry =
  { kind: 'retry-later'; nextRetryAtMs: number } | { kind: 'delete' } | { kind: 'await-operator' };

/**
 * What follows the `retriesMade`-th failed retry (this one counted) at `nowMs`: the next retry
 * after its backoff, or, with none left, deletion of a device the agent made (`owned`), or an
 * operator for any other.
 */
export function afterFailedRetry(
  retriesMade: number,
  nowMs: number,
  owned: boolean,
  settings: QuarantineSettings,
): AfterFailedRetry {
  const wait = settings.backoffMs[retriesMade];
  if (wait !== undefined) return { kind: 'retry-later', nextRetryAtMs: nowMs + wait };
  return owned ? { kind: 'delete' } : { kind: 'await-operator' };
}

/** The reason the view shows: the cause, and what the last retry saw fail. */
export function quarantineReason(record: QuarantineRecord): string {
  const reason =
    record.lastFailure === undefined
      ? record.cause
      : `${record.cause}; retry ${record.retries} failed: ${record.lastFailure}`;
  return reason.slice(0, 256);
}

/** An operator's request (`spec.unquarantine`'s `at`) ends a quarantine begun before it. */
export function endsQuarantine(sinceMs: number, askedAtMs: number): boolean {
  return Number.isFinite(askedAtMs) && sinceMs < askedAtMs;
}

/** The earliest retry that falls due among `records`, if any. */
export function nextDue(records: Iterable<QuarantineRecord>): number | undefined {
  let earliest: number | undefined;
  for (const record of records) {
    if (record.nextRetryAtMs === undefined) continue;
    if (earliest === undefined || record.nextRetryAtMs < earliest) earliest = record.nextRetryAtMs;
  }
  return earliest;
}
