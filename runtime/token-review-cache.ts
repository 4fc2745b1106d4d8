// A short memory of accepted tokens, so that a caller who sends many requests with one token costs
// one TokenReview per `ttlMs` instead of one per request: what kube-apiserver's own cached token
// authenticator does in front of a webhook. Keys are SHA-256 digests of the tokens (no token is
// kept as a key); only accepted tokens are remembered (a flood of bad tokens cannot fill it, and a
// token refused once is asked about again next time); the map is bounded, the oldest entry going
// first. Reviews of one token asked for at once share one answer. A token revoked is still
// accepted until its entry expires: at most `ttlMs`.
import { createHash } from 'node:crypto';

export interface TokenReviewCacheOptions {
  /** How long an accepted token is remembered. */
  ttlMs: number;
  /** Entries at most (accepted tokens remembered). */
  maxEntries?: number;
  /** Milliseconds since some origin (tests move it by hand). */
  now?: () => number;
}

export class TokenReviewCache<T> {
  private readonly accepted = new Map<string, { answer: T; until: number }>();
  private readonly asking = new Map<string, Promise<T | undefined>>();
  private readonly now: () => number;
  private readonly maxEntries: number;

  constructor(private readonly options: TokenReviewCacheOptions) {
    this.now = options.now ?? (() => Date.now());
    this.maxEntries = options.maxEntries ?? 1000;
  }

  get size(): number {
    return this.accepted.size;
  }

  /**
   * The answer for `token`: remembered, or `review`'s (undefined: not accepted). A review that
   * throws is not remembered and throws to every caller that shared it.
   */
  async review(
    token: string,
    review: (token: string) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    const key = createHash('sha256').update(token).digest('base64url');
    const hit = this.accepted.get(key);
    if (hit && hit.until > this.now()) return hit.answer;
    if (hit) this.accepted.delete(key);
    const shared = this.asking.get(key);
    if (shared) return shared;
    const asked = review(token).then(
      (answer) => {
        this.asking.delete(key);
        if (answer !== undefined) this.remember(key, answer);
        return answer;
      },
      (error: unknown) => {
        this.asking.delete(key);
        throw error;
      },
    );
    this.asking.set(key, asked);
    return asked;
  }

  private remember(key: string, answer: T): void {
    this.accepted.delete(key);
    while (this.accepted.size >= this.maxEntries) {
      const oldest = this.accepted.keys().next();
      if (oldest.done === true) break;
      this.accepted.delete(oldest.value);
    }
    this.accepted.set(key, { answer, until: this.now() + this.options.ttlMs });
  }
}
