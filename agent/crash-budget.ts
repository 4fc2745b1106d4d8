// How often a leased device may crash before its lease is given up: a crash is recovered under
// the same lease (`crashed`) until the crashes within the window reach the limit, and the one that
// reaches it ends the lease and quarantines the device (`crashedTooOften`; device-transitions.ts).
// Pure: the caller passes the time of the crash (its clock's `now`) and keeps the history it gets
// back for the next one.

export interface CrashRule {
  /** Crashes within the window that end the lease (the last one counted). */
  limit: number;
  windowMs: number;
}

/** Three crashes within ten minutes (issue 34's default). */
export const DEFAULT_CRASH_RULE: CrashRule = { limit: 3, windowMs: 10 * 60_000 };

export interface CrashVerdict {
  /** The event to send the device machine for this crash. */
  event: 'crashed' | 'crashedTooOften';
  /** The crashes still within the window, this one last: pass it with the next crash. */
  history: number[];
}

/**
 * Counts the crash at `now` with the earlier ones (`history`, times in ms) that fall within the
 * window ending at it (a crash exactly `windowMs` before is outside); times after `now` are
 * dropped, so a clock that stepped back cannot hold crashes in the window for ever.
 */
export function crashBudget(
  history: readonly number[],
  now: number,
  rule: CrashRule = DEFAULT_CRASH_RULE,
): CrashVerdict {
  const recent = history.filter((at) => at > now - rule.windowMs && at <= now);
  recent.sort((a, b) => a - b);
  recent.push(now);
  return { event: recent.length >= rule.limit ? 'crashedTooOften' : 'crashed', history: recent };
}
