// Whether this process can hear the API server, as the one write it makes on a clock tells (its
// leader election's renewal): a heartbeat that lapsed while it could not is no news of its worker.
// The agent renews through the same API server, so when etcd restarts, every heartbeat lapses at
// once: judged as the workers' absence, every dispatch not yet answered was given up and every
// request admitted then failed NO_CAPACITY ("every worker ... disconnected"), for a blip of the
// control plane (the soak's etcd restarts). Kubernetes's node lifecycle controller stops evicting
// when every node looks down at once, for the same reason.
//
// So a lapse that falls due while a renewal is unanswered (in flight, or failed since the last one
// answered) is held: the worker still counts as connected, and is judged again at the next answer.
// An answer after a failure, or more than a second after its renewal was sent, ends a silence: a
// heartbeat fresh when it began lapses no sooner than one heartbeat period after its end, time for
// the agent to renew; a worker whose heartbeat had lapsed before it is judged as ever. A quick
// answer ends no silence: a lapse held for it is judged at once. Renewals come every few seconds
// (a third of the leader's lease: 5 s by default), sooner than a heartbeat lapses (10 s and
// more), so a silence is seen before its first lapse.
// Pure: the caller says when.
/** A renewal answered later than this after it was sent was held by the API server: a silence. */
const SLOW_ANSWER_MS = 1000;

export class ApiContact {
  /** When the last renewal that was answered came back. */
  private heardAt: number | undefined;
  /** Renewals sent and not answered (nor failed) yet, and when the first of them was sent. */
  private inFlight = 0;
  private inFlightSince: number | undefined;
  /** A renewal failed since the last answer. */
  private failedSinceHeard = false;
  /** A lapse was held since the last answer: to be judged again at the next. */
  private held = false;
  /** The last silence that ended: from the answer before it to the answer that ended it. */
  private lastSilence: { from: number; to: number } | undefined;
  private readonly listeners: (() => void)[] = [];

  /** A renewal is on its way. */
  sent(at: number): void {
    if (this.inFlight === 0) this.inFlightSince = at;
    this.inFlight++;
  }

  /** A renewal came back (taken or not: the API server answered). */
  answered(at: number): void {
    const slow = this.inFlightSince !== undefined && at - this.inFlightSince > SLOW_ANSWER_MS;
    this.settle();
    const silence = this.heardAt !== undefined && (this.failedSinceHeard || slow);
    if (silence) this.lastSilence = { from: this.heardAt ?? at, to: at };
    const judgeAgain = silence || this.held;
    this.heardAt = at;
    this.failedSinceHeard = false;
    this.held = false;
    if (judgeAgain) for (const listener of this.listeners) listener();
  }

  /** A renewal failed for want of an answer (unreachable, timed out, the server's own error). */
  failed(): void {
    this.settle();
    this.failedSinceHeard = true;
  }

  /** `listener` is told when the lapses held are to be judged again (a renewal answered). */
  onAnswerAfterHold(listener: () => void): void {
    this.listeners.push(listener);
  }

  /**
   * When a heartbeat whose renewal lapses at `lapsesAt` (lasting `durationMs`) is judged lapsed,
   * asked at `now`: Infinity while it is held (judged again at the next answer).
   */
  lapseOf(lapsesAt: number, durationMs: number, now: number): number {
    const last = this.lastSilence;
    const judged =
      last && lapsesAt > last.from ? Math.max(lapsesAt, last.to + durationMs) : lapsesAt;
    if (judged > now || this.heardAt === undefined) return judged;
    if (this.inFlight === 0 && !this.failedSinceHeard) return judged;
    this.held = true;
    return Infinity;
  }

  private settle(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight === 0) this.inFlightSince = undefined;
  }
}
