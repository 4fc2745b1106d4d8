// The soak's own writes (its load's creates and deletes, the partition checks' pinned requests) are
// the harness's, not the product's: one lost to a fault the soak itself made (kube-apiserver
// restarting as a request is deleted) must not read as a violation of the product. So each is
// tried again, with backoff, until it succeeds; one that still fails after its deadline, or is
// refused outright, is the harness's failure: kept in `failures`, reported apart from the
// invariants, and thrown as a HarnessError so that the caller stops relying on it. So is a fault
// the harness could not make (`failed`: the control plane not back after its restart).
import {
  KubeApiError,
  backoffDelay,
  isNotFound,
  isTransient,
  sleep,
  systemClock,
  type Backoff,
  type Clock,
} from '../../runtime/index.js';

/** How long a write of the soak's own is tried: longer than a restart of etcd or kube-apiserver. */
export const HARNESS_WRITE_DEADLINE_MS = 180_000;
const BACKOFF: Backoff = { initialMs: 250, maxMs: 5000, jitter: 0.2 };

/** A write of the harness given up, or a fault it could not make: its failure, not the product's. */
export class HarnessError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HarnessError';
  }
}

/**
 * Worth trying again: the API server unreachable, overloaded or restarting (the runtime's
 * isTransient), or a 404 that names no object: the resource not served yet by an API server whose
 * custom-resource handler has not caught up after a restart.
 */
export function worthRetrying(error: unknown): boolean {
  if (isTransient(error)) return true;
  return error instanceof KubeApiError && error.status === 404 && !isNotFound(error);
}

export class HarnessWrites {
  /** Writes given up and faults not made, one line each: what, why (after how many tries). */
  readonly failures: string[] = [];
  /** Tries that failed and were made again. */
  retries = 0;

  constructor(
    private readonly options: {
      clock?: Clock;
      deadlineMs?: number;
      random?: () => number;
      log?: (line: string) => void;
    } = {},
  ) {}

  /**
   * Runs `attempt` until it resolves; `retry` is true from the second try on (a create answered
   * AlreadyExists then was stored by a try whose answer was lost). `deadlineMs` narrows the
   * deadline for a write that is of no use later (the release of a request while its worker is cut
   * off). Throws a HarnessError when it gives up, after recording it.
   */
  async write<T>(
    what: string,
    attempt: (retry: boolean) => Promise<T>,
    deadlineMs = this.options.deadlineMs ?? HARNESS_WRITE_DEADLINE_MS,
  ): Promise<T> {
    const clock = this.options.clock ?? systemClock();
    const started = clock.now();
    for (let tries = 1; ; tries++) {
      try {
        return await attempt(tries > 1);
      } catch (error) {
        const delay = backoffDelay(BACKOFF, tries, this.options.random ?? Math.random);
        if (!worthRetrying(error) || clock.now() + delay > started + deadlineMs) {
          const seconds = ((clock.now() - started) / 1000).toFixed(1);
          throw this.failed(
            what,
            error,
            `${tries} ${tries === 1 ? 'try' : 'tries'} in ${seconds} s`,
          );
        }
        this.retries++;
        await sleep(clock, delay);
      }
    }
  }

  /** Records a failure of the harness's own (`how`: after what); answers the error to throw. */
  failed(what: string, error: unknown, how?: string): HarnessError {
    const failure = `${what}: ${describe(error)}${how ? ` (${how})` : ''}`;
    this.failures.push(failure);
    this.options.log?.(`harness: ${failure}`);
    return new HarnessError(failure, { cause: error });
  }
}

function describe(error: unknown): string {
  if (error instanceof KubeApiError) return `${error.status} ${error.reason}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
