// The writes a request's effects make (request-shell.ts carries the effects out): the release
// finalizer on and off, the first assessment, the Lease's create, withdrawal, delete and extension
// through the lease dispatcher, and the sweep of a request's other Leases. Each answers with the
// machine's event, which the shell applies (none: nothing to tell); a write that failed is
// retried with the request's backoff (request-timers.ts), never dropped, and its answer is
// applied when the retry is made.
import { REQUEST_FINALIZER, ObjectMeta, type RoutingPolicy } from '../api/index.js';
import {
  isNotFound,
  isTransient,
  resourceVersionOf,
  simlockPath,
  type KubeClient,
  type KubeObject,
  type Logger,
} from '../runtime/index.js';
import { failOnAdmission } from './fail-now.js';
import type { FleetCache } from './fleet-cache.js';
import type { DeleteAnswer, LeaseDispatcher, WithdrawAnswer } from './lease-dispatcher.js';
import { shownWorkerOf } from './request-life.js';
import type { RequestEvent } from './request-machine.js';
import type { RequestTimers } from './request-timers.js';
import type { TrackedRequest } from './tracked-request.js';
import type { WriteQueue } from './write-queue.js';

export interface RequestWritesOptions {
  client: KubeClient;
  writes: WriteQueue;
  log: Logger;
  policy: RoutingPolicy;
  fleet: FleetCache;
  leases: LeaseDispatcher;
  timers: RequestTimers;
  /** The LeaseRequest object as our informer has it now. */
  lookup: (key: string) => KubeObject | undefined;
}

/** What a write answers the machine with: its event, or none. */
type MachineAnswer = Promise<RequestEvent | undefined>;

export class RequestWrites {
  private readonly timers: RequestTimers;

  constructor(private readonly options: RequestWritesOptions) {
    this.timers = options.timers;
  }

  async admit(request: TrackedRequest): MachineAnswer {
    if (!request.hasFinalizer) {
      try {
        await this.patchFinalizers(request, (names) => [...names, REQUEST_FINALIZER]);
        request.hasFinalizer = true;
        this.timers.succeeded(request);
      } catch (error) {
        if (isNotFound(error)) return undefined;
        this.options.log.warn('could not add the release finalizer; retrying', {
          request: request.key,
          error,
        });
        this.timers.retry(request, 'admit', error, () =>
          request.life.kind === 'admitting' ? this.admit(request) : Promise.resolve(undefined),
        );
        return undefined;
      }
    }
    const views = this.options.fleet.current().views;
    const failure = failOnAdmission(this.options.policy, request.spec, views);
    return { type: 'assessed', failure };
  }

  /**
   * Creates the request's Lease on `worker`, and keeps it as the request's create in flight until
   * the API server answers it for certain: a withdrawal or a delete meanwhile waits for it
   * (`createAnswered`). Looked for before the create had answered, the Lease was not there yet; the
   * request was dispatched elsewhere, and the create, held by an API server waiting on etcd,
   * landed after: two workers granted one request (the soak's "granted under two Leases").
   */
  createLease(request: TrackedRequest, worker: string): MachineAnswer {
    let answered: () => void = () => undefined;
    const create = { worker, answered: new Promise<void>((resolve) => (answered = resolve)) };
    request.leaseCreate = create;
    return this.tryCreate(request, worker, (event) => {
      if (request.leaseCreate === create) request.leaseCreate = undefined;
      answered();
      return event;
    });
  }

  private async tryCreate(
    request: TrackedRequest,
    worker: string,
    done: (event: RequestEvent) => RequestEvent,
  ): MachineAnswer {
    const answer = await this.options.leases.create(request, worker);
    switch (answer.kind) {
      case 'created': {
        this.timers.succeeded(request);
        const watched =
          answer.uid !== undefined &&
          this.options.leases.watched(request, worker)?.uid === answer.uid;
        return done({ type: 'leaseCreated', worker, uid: answer.uid, watched });
      }
      case 'existed':
        this.timers.succeeded(request);
        this.options.log.info('lease already exists; adopting it', { request: request.key });
        return done({ type: 'leaseExisted', worker, lease: answer.lease });
      case 'failed':
        if (isTransient(answer.error) && this.options.lookup(request.key) !== undefined) {
          // No answer, or the API server's own trouble: the Lease may have been made all the same
          // (a create held through an etcd restart outlives its client's timeout). The same create
          // again answers for certain: made now, or there already (AlreadyExists: adopted).
          this.options.log.warn('could not create the lease; trying again on the same worker', {
            request: request.key,
            worker,
            error: answer.error,
          });
          this.timers.retry(request, 'createLease', answer.error, () =>
            this.tryCreate(request, worker, done),
          );
          return undefined;
        }
        this.options.log.warn('could not create the lease; back to the queue', {
          request: request.key,
          worker,
          error: answer.error,
        });
        return done({ type: 'leaseCreateFailed', worker });
    }
  }

  /** The worker of the request's create in flight, once it has answered; none when none is. */
  private async createAnswered(request: TrackedRequest): Promise<string | undefined> {
    const create = request.leaseCreate;
    if (!create) return undefined;
    await create.answered;
    return create.worker;
  }

  async deleteLease(request: TrackedRequest): MachineAnswer {
    await this.createAnswered(request);
    let answer: DeleteAnswer;
    try {
      answer = await this.options.leases.delete(request, shownWorkerOf(request.life));
    } catch (error) {
      // Until its Lease is gone the request cannot be dispatched again nor let go: retried.
      this.options.log.warn('could not delete the lease; retrying', {
        request: request.key,
        error,
      });
      this.timers.retry(request, 'deleteLease', error, () => this.deleteLease(request));
      return undefined;
    }
    this.timers.succeeded(request);
    if (answer.uid !== undefined) request.deletedLeases.add(answer.uid);
    return { type: 'leaseDeleteAnswered', outright: answer.outright };
  }

  /**
   * A request has one Lease. Another of it (a create the API server held past the dispatch's
   * withdrawal, landing once the request had gone elsewhere; ADR 0034 puts each worker's Leases in
   * a namespace of their own, so it is not refused as a duplicate) holds, or may yet hold, a device
   * for nobody. Level-based (the shell sweeps after each step; the machine sees one Lease at a
   * time): once the request is on a Lease of known uid, every other Lease of it our watch has, not
   * already being let go, is deleted by its uid, and its agent reclaims what it granted. A delete
   * that failed is swept again after the request's backoff. A Lease this process deleted itself
   * is not swept: our watch may deliver its going after the request has gone elsewhere (a new
   * leader's watch, catching up, showed a withdrawn Lease unwithdrawn for a moment).
   */
  sweepStrayLeases(request: TrackedRequest): void {
    const life = request.life;
    if (life.kind !== 'dispatched' && life.kind !== 'granted') return;
    // After a restart a granted life knows its worker, not its Lease's uid: the one on that worker.
    const own = life.leaseUid ?? this.options.leases.watched(request, life.worker)?.uid;
    if (own === undefined) return;
    for (const lease of this.options.leases.allWatched(request)) {
      if (lease.uid === undefined || lease.uid === own || lease.lettingGo === true) continue;
      if (lease.worker === undefined || request.deletedLeases.has(lease.uid)) continue;
      request.deletedLeases.add(lease.uid);
      void this.deleteStrayLease(request, lease.worker, lease.uid);
    }
  }

  private async deleteStrayLease(request: TrackedRequest, worker: string, uid: string) {
    this.options.log.warn('another Lease of the request than the one it is on; deleting it', {
      request: request.key,
      worker,
      lease: uid,
    });
    try {
      await this.options.leases.deleteStray(request, worker, uid);
      this.timers.succeeded(request);
    } catch (error) {
      this.options.log.warn('could not delete the stray lease; retrying', {
        request: request.key,
        error,
      });
      request.deletedLeases.delete(uid);
      this.timers.retry(request, 'deleteStrayLease', error, () => {
        this.sweepStrayLeases(request);
        return Promise.resolve(undefined);
      });
    }
  }

  /** Moves the Lease's expiry; retried after the request's backoff until it is written. */
  async extendLease(request: TrackedRequest, at: number, seconds: number): MachineAnswer {
    try {
      await this.options.leases.extend(request, shownWorkerOf(request.life), at, seconds);
      this.timers.succeeded(request);
    } catch (error) {
      if (isNotFound(error) || request.life.kind !== 'granted') return undefined;
      this.options.log.warn('could not extend the lease; retrying', {
        request: request.key,
        error,
      });
      this.timers.retry(request, 'extendLease', error, () =>
        this.extendLease(request, at, seconds),
      );
    }
    return undefined;
  }

  /**
   * Withdraws the dispatch's Lease, on `worker` (the dispatch's; a life that is withdrawing names
   * none): once its create has answered, so that a Lease it makes is withdrawn, not left behind.
   */
  async withdrawLease(request: TrackedRequest, worker?: string): MachineAnswer {
    const createdOn = await this.createAnswered(request);
    const on = worker ?? shownWorkerOf(request.life) ?? createdOn;
    let answer: WithdrawAnswer;
    try {
      answer = await this.options.leases.withdraw(request, on);
    } catch (error) {
      this.options.log.warn('could not withdraw the lease; retrying', {
        request: request.key,
        error,
      });
      this.timers.retry(request, 'deleteLease', error, () => this.withdrawLease(request, on));
      return undefined;
    }
    this.timers.succeeded(request);
    if (answer.kind === 'deleted') {
      if (answer.uid !== undefined) request.deletedLeases.add(answer.uid);
      return { type: 'leaseDeleteAnswered', outright: answer.outright };
    }
    this.options.log.info('the agent granted the Lease before our withdrawal; keeping the grant', {
      request: request.key,
    });
    return { type: 'withdrawalLostToGrant', lease: answer.lease };
  }

  async removeFinalizer(request: TrackedRequest): MachineAnswer {
    if (!this.finalizersOf(request).includes(REQUEST_FINALIZER)) return undefined;
    try {
      await this.patchFinalizers(request, (names) => names);
      this.timers.succeeded(request);
    } catch (error) {
      if (isNotFound(error)) return undefined;
      this.options.log.warn('could not remove the release finalizer; retrying', {
        request: request.key,
        error,
      });
      this.timers.retry(request, 'removeFinalizer', error, () => this.removeFinalizer(request));
    }
    return undefined;
  }

  /** Sets the request's finalizers to `change` of the others, onto the version our informer has. */
  private async patchFinalizers(
    request: TrackedRequest,
    change: (others: string[]) => string[],
  ): Promise<void> {
    const resourceVersion = this.options.lookup(request.key)?.metadata.resourceVersion;
    const others = this.finalizersOf(request).filter((name) => name !== REQUEST_FINALIZER);
    const answer = await this.options.writes.run('bookkeeping', () =>
      this.options.client.patch(
        simlockPath('leaseRequest', { namespace: request.namespace, name: request.name }),
        { metadata: { finalizers: change(others), resourceVersion } },
      ),
    );
    // The status write that follows is made onto this version, not the informer's older one.
    request.writtenVersion = resourceVersionOf(answer);
  }

  /** The request's finalizers as our informer has them. */
  private finalizersOf(request: TrackedRequest): string[] {
    const metadata = ObjectMeta.safeParse(this.options.lookup(request.key)?.metadata);
    return metadata.success ? (metadata.data.finalizers ?? []) : [];
  }
}
