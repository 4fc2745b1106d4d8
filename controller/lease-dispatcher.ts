// The lease dispatcher: the writes on Leases (the Lease a dispatch makes is lease-object.ts):
// create, withdraw or delete, and letting go of a Lease no agent will ever let go of. A Lease lives
// in its worker's namespace, named by its request's UID (ADR 0034): the dispatcher finds a
// request's Lease by that UID (its index of the Lease informer), or where the request's worker puts
// it. Every Lease read off the API is parsed with its schema before use (parsed-lease.ts).
import { LEASE_FINALIZER, LEASE_WITHDRAWN_ANNOTATION } from '../api/index.js';
import {
  WorkQueue,
  isAlreadyExists,
  isConflict,
  isNotFound,
  simlockPath,
  type Clock,
  type Informer,
  type KubeClient,
  type KubeObject,
  type Logger,
  type WorkQueueObserver,
} from '../runtime/index.js';
import { LeaseNamespaces } from './lease-namespaces.js';
import { leaseFor, leasePlaceOf, type DispatchedRequest, type LeasePlace } from './lease-object.js';
import { LeasesByRequest } from './leases-by-request.js';
import { parseLease, type ParsedLease } from './parsed-lease.js';
import type { WriteQueue } from './write-queue.js';

/** What letting go of a request's Lease found: none, one its agent holds, or one to delete. */
type LetGo =
  | { kind: 'absent' }
  | { kind: 'granted'; lease: ParsedLease }
  | { kind: 'letGo'; lease: ParsedLease };

/** Conditional withdrawal writes tried on a Lease that changes under them, before a backoff. */
const MAX_WITHDRAWAL_ATTEMPTS = 3;

export type CreateAnswer =
  | { kind: 'created'; uid: string | undefined }
  /** AlreadyExists: the Lease there, if it could be read. */
  | { kind: 'existed'; lease: ParsedLease | undefined }
  | { kind: 'failed'; error: unknown };

/** A delete answered: whether the Lease is gone already, and the uid of the one deleted (if any). */
export interface DeleteAnswer {
  outright: boolean;
  uid: string | undefined;
}

export type WithdrawAnswer =
  /** The agent granted it first: kept. */
  { kind: 'grantWon'; lease: ParsedLease } | ({ kind: 'deleted' } & DeleteAnswer);

export interface LeaseDispatcherOptions {
  client: KubeClient;
  writes: WriteQueue;
  clock: Clock;
  log: Logger;
  leases: Informer;
  /** Whether our Worker informer knows the worker (it sees only the workers we select). */
  workerKnown: (name: string) => boolean;
  /** The UID of the Worker of this name, as our informer has it (its namespace's owner). */
  workerUid: (name: string) => string | undefined;
  observer?: WorkQueueObserver | undefined;
  /** The controller's --max-lease-duration. */
  maxLeaseMs?: number | undefined;
}

export class LeaseDispatcher {
  /** Leases whose Worker is being looked up (see letGoIfWorkerGone). */
  private readonly orphanChecks = new Set<string>();
  /** Leases whose letting go failed, retried with backoff. */
  private readonly retries: WorkQueue;
  /** Every Lease of each request, by its UID (leases-by-request.ts). */
  private readonly byRequest: LeasesByRequest;
  /** The workers' Lease namespaces, made at a Worker's first sight (lease-namespaces.ts). */
  readonly namespaces: LeaseNamespaces;

  constructor(private readonly options: LeaseDispatcherOptions) {
    this.namespaces = new LeaseNamespaces(options);
    // Before any other handler of the informer: theirs look Leases up by their requests.
    this.byRequest = new LeasesByRequest(options.leases);
    this.retries = new WorkQueue({
      name: 'leases',
      clock: options.clock,
      observer: options.observer,
      reconcile: (key) => {
        const current = this.options.leases.get(key);
        if (current) void this.letGoIfWorkerGone(current);
      },
    });
  }

  /** The request's Lease, as our watch has it: of several, the one on `worker`. */
  watched(request: { uid: string }, worker?: string): ParsedLease | undefined {
    return this.byRequest.one(request, worker);
  }

  /**
   * The Lease a request first seen by this process is taken up on: one its agent granted (on the
   * worker the request's status names, first), else as `watched`. A process that died with a
   * create in flight may leave a granted Lease beside the one the status names (a dispatch it gave
   * up whose create landed after it stopped): taking the unanswered one deleted the grant as a
   * stray, and the request waited for an answer that did not come.
   */
  toTakeUp(request: { uid: string }, worker?: string): ParsedLease | undefined {
    return this.byRequest.granted(request, worker) ?? this.byRequest.one(request, worker);
  }

  /** Every Lease of the request our watch has: one, but for a moment. */
  allWatched(request: { uid: string }): ParsedLease[] {
    return this.byRequest.all(request);
  }

  async create(request: DispatchedRequest, worker: string): Promise<CreateAnswer> {
    const lease = leaseFor(request, worker, this.options.clock.now(), this.options.maxLeaseMs);
    const place = leasePlaceOf(request, worker);
    const create = () =>
      this.options.writes.run('dispatch', () =>
        this.options.client.create(simlockPath('lease', { namespace: place.namespace }), lease),
      );
    try {
      let created;
      try {
        created = await create();
      } catch (error) {
        // The worker's first Lease (or its namespace was deleted with an earlier Worker).
        if (!isNotFound(error)) throw error;
        await this.namespaces.make(worker);
        created = await create();
      }
      return { kind: 'created', uid: parseLease(created)?.uid };
    } catch (error) {
      if (!isAlreadyExists(error)) return { kind: 'failed', error };
      // The informer may not have it yet; the API server has.
      return { kind: 'existed', lease: this.watched(request, worker) ?? (await this.read(place)) };
    }
  }

  /**
   * Where the request's Lease is: as our watch has it, else where its dispatch to `worker` made it;
   * none when neither is known (never dispatched).
   */
  private placeOf(request: DispatchedRequest, worker: string | undefined): LeasePlace | undefined {
    const lease = this.watched(request, worker);
    if (lease) return { namespace: lease.namespace, name: lease.name };
    return worker === undefined ? undefined : leasePlaceOf(request, worker);
  }

  /** Moves the Lease's expiry (an extension); its agent honours spec.expiresAt. Throws on failure. */
  async extend(
    request: DispatchedRequest,
    worker: string | undefined,
    expiresAt: number,
    durationSeconds: number,
  ): Promise<void> {
    const place = this.placeOf(request, worker);
    if (!place) return;
    const path = simlockPath('lease', place);
    const spec = { expiresAt: new Date(expiresAt).toISOString(), durationSeconds };
    await this.options.writes.run('bookkeeping', () => this.options.client.patch(path, { spec }));
  }

  /**
   * Deletes the request's Lease; one no agent holds is let go of first (letGoOfUnheldLease).
   * Answers whether it is gone already (no finalizer held it, or it was not there) and which
   * Lease it deleted; throws when the delete failed.
   */
  async delete(request: DispatchedRequest, worker: string | undefined): Promise<DeleteAnswer> {
    const found = await this.letGoOfUnheldLease(request, worker);
    if (found.kind === 'absent') return { outright: true, uid: undefined };
    return { ...(await this.deleteOnly(found.lease)), uid: found.lease.uid };
  }

  /**
   * Withdraws the Lease of a dispatch that came to nothing: as `delete`, except that a Lease its
   * agent granted after all (the grant was written first) is kept, and answered.
   */
  async withdraw(request: DispatchedRequest, worker: string | undefined): Promise<WithdrawAnswer> {
    const found = await this.letGoOfUnheldLease(request, worker);
    if (found.kind === 'granted') return { kind: 'grantWon', lease: found.lease };
    if (found.kind === 'absent') return { kind: 'deleted', outright: true, uid: undefined };
    return { kind: 'deleted', ...(await this.deleteOnly(found.lease)), uid: found.lease.uid };
  }

  /**
   * Deletes the request's Lease of uid `uid` on `worker`, one it is not on (request-writes.ts,
   * sweepStrayLeases); gone already, or another of its name there now, counts as done.
   */
  async deleteStray(request: DispatchedRequest, worker: string, uid: string): Promise<void> {
    await this.deleteOnly({ ...leasePlaceOf(request, worker), uid });
  }

  /**
   * Deletes this very Lease (a uid precondition): never another made under its name since it was
   * read, such as the Lease of a create that was still in flight when we looked and found none.
   */
  private async deleteOnly(
    lease: Pick<ParsedLease, 'namespace' | 'name' | 'uid'>,
  ): Promise<{ outright: boolean }> {
    try {
      const answer = await this.options.writes.run('dispatch', () =>
        this.options.client.delete(
          simlockPath('lease', { namespace: lease.namespace, name: lease.name }),
          lease.uid ? { body: { preconditions: { uid: lease.uid } } } : {},
        ),
      );
      // Deleted outright (no finalizer): dispatch may go on. With a finalizer, wait for the event.
      return { outright: (parseLease(answer)?.finalizers.length ?? 0) === 0 };
    } catch (error) {
      if (isNotFound(error)) return { outright: true };
      // Another Lease of that name now: not ours to delete; its news comes as an event.
      if (isConflict(error)) return { outright: true };
      throw error;
    }
  }

  /**
   * A Lease being deleted whose Worker is gone (removed by its operator) has no agent to reclaim
   * its device and let it go: take the agent's finalizer off, so that the request it belongs to can
   * be released (as Kubernetes lets go of the pods of a deleted Node). Whether the Worker is gone is
   * asked of the API server, not of our informer, which sees only the workers we select.
   */
  async letGoIfWorkerGone(object: KubeObject): Promise<void> {
    const lease = parseLease(object);
    if (!lease?.deleting || !lease.finalizers.includes(LEASE_FINALIZER)) return;
    if (lease.worker === undefined || this.options.workerKnown(lease.worker)) return;
    if (this.orphanChecks.has(lease.key)) return;
    this.orphanChecks.add(lease.key);
    try {
      try {
        await this.options.client.get(simlockPath('worker', { name: lease.worker }));
        return;
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
      this.options.log.warn('the worker of a Lease being deleted is gone; letting the Lease go', {
        lease: lease.key,
        worker: lease.worker,
      });
      await this.takeReclaimFinalizerOff(lease);
      this.retries.forget(lease.key);
    } catch (error) {
      // A newer version of the Lease comes as an event and is looked at then; anything else is
      // tried again after a backoff.
      if (!isNotFound(error) && !isConflict(error)) {
        this.options.log.warn('could not let go of the Lease of a gone worker; retrying', {
          lease: lease.key,
          error,
        });
        this.retries.requeueAfterFailure(lease.key, error);
      }
    } finally {
      this.orphanChecks.delete(lease.key);
    }
  }

  async stop(): Promise<void> {
    await this.retries.shutDown();
  }

  private async read(place: LeasePlace): Promise<ParsedLease | undefined> {
    try {
      return parseLease(await this.options.client.get(simlockPath('lease', place)));
    } catch (error) {
      if (!isNotFound(error))
        this.options.log.warn('could not read the lease', { lease: place.name, error });
      return undefined;
    }
  }

  /**
   * Takes the agent's finalizer off a Lease, only onto the version given (a conflict if it changed
   * since), with some annotations in the same write.
   */
  private async takeReclaimFinalizerOff(
    lease: ParsedLease,
    annotations?: Record<string, string>,
  ): Promise<void> {
    await this.options.writes.run('dispatch', () =>
      this.options.client.patch(
        simlockPath('lease', { namespace: lease.namespace, name: lease.name }),
        {
          metadata: {
            finalizers: lease.finalizers.filter((name) => name !== LEASE_FINALIZER),
            ...(annotations ? { annotations } : {}),
            resourceVersion: lease.resourceVersion,
          },
        },
      ),
    );
  }

  /**
   * A Lease no agent holds (refused, lost, or not answered yet) carries the agent's finalizer all
   * the same (dispatch puts it there): take it off, so that the Lease goes at once also when its
   * agent is gone, and mark it withdrawn, so that no agent answers it in the moment before it is
   * deleted. Only onto the Lease as last seen: an agent that grants meanwhile makes this fail
   * (its grant is made the same way, so one of the two fails); then the Lease is read again and
   * the withdrawal tried on that version, so that it is deleted only once marked. Answers what it
   * found (none, granted after all, or let go of); throws when it could not be let go of (retried
   * by the caller). Finding none, nothing is to be deleted: a create still in flight may make the
   * Lease a moment later, and a delete by name would take that one, granted or not.
   */
  private async letGoOfUnheldLease(
    request: DispatchedRequest,
    worker: string | undefined,
  ): Promise<LetGo> {
    const isGranted = (lease: ParsedLease): boolean =>
      !lease.deleting && lease.status?.phase === 'Granted';
    // Our watch may not have delivered a Lease just created (a dispatch timed out before it did).
    // A read that fails throws: taken as "no Lease", it would delete one its agent just granted.
    const place = this.placeOf(request, worker);
    if (!place) return { kind: 'absent' };
    let lease = this.watched(request, worker) ?? (await this.readOrThrow(place));
    for (let attempt = 1; ; attempt++) {
      if (!lease) return { kind: 'absent' };
      if (isGranted(lease)) return { kind: 'granted', lease };
      if (!lease.finalizers.includes(LEASE_FINALIZER) || lease.deleting)
        return { kind: 'letGo', lease };
      try {
        // Between this write and the delete the agent must not answer it again.
        await this.takeReclaimFinalizerOff(lease, { [LEASE_WITHDRAWN_ANNOTATION]: 'true' });
        return { kind: 'letGo', lease };
      } catch (error) {
        if (isNotFound(error)) return { kind: 'absent' };
        // Never delete a Lease that is not marked withdrawn: its agent could grant it in the
        // moment before the delete, and the request would be granted a second time elsewhere.
        // Another failure, or a Lease that keeps changing, is retried with backoff by the caller.
        if (!isConflict(error) || attempt === MAX_WITHDRAWAL_ATTEMPTS) throw error;
      }
      // The Lease changed since we read it: its agent acknowledged it, or granted it meanwhile.
      // Look again, and withdraw the version there (the agent's grant is made the same way).
      // (A Lease is named by its request's UID, so whatever is there is the request's Lease.)
      lease = await this.readOrThrow(place);
    }
  }

  /** The request's Lease as the API server has it; undefined when there is none; throws else. */
  private async readOrThrow(place: LeasePlace): Promise<ParsedLease | undefined> {
    try {
      return parseLease(await this.options.client.get(simlockPath('lease', place)));
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}
