// What one person may see and do, as the API server's authorizer answers: the console asks
// before it shows an object or offers an action, so its own identity never widens anyone's view.
// In token mode it asks SubjectAccessReviews about the person (the console's identity may ask);
// run locally it asks SelfSubjectAccessReviews with the person's own kubeconfig. Answers are kept
// for a while: access changes slowly, and a page may show thousands of objects.
import { GROUP, RESOURCES } from '../../api/index.js';
import type { ResourceAttributes } from '../../runtime/index.js';
import type { Abilities } from '../model/wire.js';

/** How long an answer is believed. */
const ANSWER_TTL_MS = 30_000;

export type Ask = (attributes: ResourceAttributes) => Promise<boolean>;

const simlock = (resource: string, verb: string, namespace?: string): ResourceAttributes => ({
  verb,
  group: GROUP,
  resource,
  ...(namespace !== undefined ? { namespace } : {}),
});

export class Access {
  private readonly answers = new Map<string, { at: number; allowed: Promise<boolean> }>();

  constructor(
    readonly user: string,
    readonly mode: Abilities['mode'],
    private readonly ask: Ask,
  ) {}

  /** The answer to one question, from the cache when fresh; a failed review is a no. */
  may(attributes: ResourceAttributes): Promise<boolean> {
    const key = JSON.stringify(attributes);
    const known = this.answers.get(key);
    const now = Date.now();
    if (known && now - known.at < ANSWER_TTL_MS) return known.allowed;
    const allowed = this.ask(attributes).catch(() => false);
    this.answers.set(key, { at: now, allowed });
    return allowed;
  }

  seeWorkers(): Promise<boolean> {
    return this.may(simlock(RESOURCES.worker.plural, 'list'));
  }

  /** Requests, and so the leases they hold (the page shows no Lease object: ADR 0034). */
  seeRequests(namespace: string): Promise<boolean> {
    return this.may(simlock(RESOURCES.leaseRequest.plural, 'list', namespace));
  }

  seeEvents(namespace: string): Promise<boolean> {
    return this.may({ verb: 'list', group: '', resource: 'events', namespace });
  }

  /** What the page offers this person, over the namespaces the console knows. */
  async abilities(namespaces: Iterable<string>): Promise<Abilities> {
    const list = [...namespaces].sort();
    const [seeWorkers, drainWorkers, releaseEverywhere, ...releaseIn] = await Promise.all([
      this.seeWorkers(),
      this.may(simlock(RESOURCES.worker.plural, 'patch')),
      this.may(simlock(RESOURCES.leaseRequest.plural, 'delete')),
      ...list.map((namespace) =>
        this.may(simlock(RESOURCES.leaseRequest.plural, 'delete', namespace)),
      ),
    ]);
    return {
      user: this.user,
      mode: this.mode,
      seeWorkers,
      drainWorkers,
      releaseEverywhere,
      releaseIn: list.filter((_, index) => releaseIn[index] === true),
    };
  }
}
