// The writes a request's effects make (request-shell.ts carries the effects out): the release
// finalizer on and off, the first assessment, and the Lease's create, withdrawal, delete and
// extension through the lease dispatcher. Each answers the machine with an event; a write that
// failed is retried with the request's backoff (the shell's `retry`), never dropped.
import { REQUEST_FINALIZER, ObjectMeta } from '../api/index.js';
import { isNotFound, resourceVersionOf, simlockPath } from '../runtime/index.js';
import { failOnAdmission } from './fail-now.js';
import type { WithdrawAnswer } from './lease-dispatcher.js';
import type { RequestEvent } from './request-machine.js';
import type { RequestShellOptions } from './request-shell.js';
import type { RequestRetry, TrackedRequest } from './tracked-request.js';

/** What the writes need of the shell: to answer the machine, and to retry. */
export interface ShellHooks {
  apply(request: TrackedRequest, event: RequestEvent): void;
  retry(
    request: TrackedRequest,
    which: RequestRetry,
    error: unknown,
    write: () => Promise<void>,
  ): void;
  succeeded(request: TrackedRequest): void;
}

export class RequestWrites {
  constructor(
    private readonly options: RequestShellOptions,
    private readonly shell: ShellHooks,
  ) {}

  async admit(request: TrackedRequest): Promise<void> {
    if (!request.hasFinalizer) {
      try {
        await this.patchFinalizers(request, (names) => [...names, REQUEST_FINALIZER]);
        request.hasFinalizer = true;
        this.shell.succeeded(request);
      } catch (error) {
        if (isNotFound(error)) return;
        this.options.log.warn('could not add the release finalizer; retrying', {
          request: request.key,
          error,
        });
        this.shell.retry(request, 'admit', error, async () => {
          if (request.life.kind === 'admitting') await this.admit(request);
        });
        return;
      }
    }
    const views = this.options.fleet.current().views;
    const failure = failOnAdmission(this.options.policy, request.spec, views);
    this.shell.apply(request, { type: 'assessed', failure });
  }

  async createLease(request: TrackedRequest, worker: string): Promise<void> {
    const answer = await this.options.leases.create(request, worker);
    switch (answer.kind) {
      case 'created': {
        this.shell.succeeded(request);
        const watched =
          answer.uid !== undefined && this.options.leases.watched(request.key)?.uid === answer.uid;
        return this.shell.apply(request, {
          type: 'leaseCreated',
          worker,
          uid: answer.uid,
          watched,
        });
      }
      case 'existed':
        this.options.log.info('lease already exists; adopting it', { request: request.key });
        return this.shell.apply(request, { type: 'leaseExisted', worker, lease: answer.lease });
      case 'failed':
        this.options.log.warn('could not create the lease; back to the queue', {
          request: request.key,
          worker,
          error: answer.error,
        });
        return this.shell.apply(request, { type: 'leaseCreateFailed', worker });
    }
  }

  async deleteLease(request: TrackedRequest): Promise<void> {
    let outright: boolean;
    try {
      ({ outright } = await this.options.leases.delete(request));
    } catch (error) {
      // Until its Lease is gone the request cannot be dispatched again nor let go: retried.
      this.options.log.warn('could not delete the lease; retrying', {
        request: request.key,
        error,
      });
      this.shell.retry(request, 'deleteLease', error, () => this.deleteLease(request));
      return;
    }
    this.shell.succeeded(request);
    this.shell.apply(request, { type: 'leaseDeleteAnswered', outright });
  }

  /** Moves the Lease's expiry; retried after the request's backoff until it is written. */
  async extendLease(request: TrackedRequest, at: number, seconds: number): Promise<void> {
    try {
      await this.options.leases.extend(request, at, seconds);
      this.shell.succeeded(request);
    } catch (error) {
      if (isNotFound(error) || request.life.kind !== 'granted') return;
      this.options.log.warn('could not extend the lease; retrying', {
        request: request.key,
        error,
      });
      this.shell.retry(request, 'extendLease', error, () => this.extendLease(request, at, seconds));
    }
  }

  async withdrawLease(request: TrackedRequest): Promise<void> {
    let answer: WithdrawAnswer;
    try {
      answer = await this.options.leases.withdraw(request);
    } catch (error) {
      this.options.log.warn('could not withdraw the lease; retrying', {
        request: request.key,
        error,
      });
      this.shell.retry(request, 'deleteLease', error, () => this.withdrawLease(request));
      return;
    }
    this.shell.succeeded(request);
    if (answer.kind === 'deleted')
      return this.shell.apply(request, { type: 'leaseDeleteAnswered', outright: answer.outright });
    this.options.log.info('the agent granted the Lease before our withdrawal; keeping the grant', {
      request: request.key,
    });
    this.shell.apply(request, { type: 'withdrawalLostToGrant', lease: answer.lease });
  }

  async removeFinalizer(request: TrackedRequest): Promise<void> {
    if (!this.finalizersOf(request).includes(REQUEST_FINALIZER)) return;
    try {
      await this.patchFinalizers(request, (names) => names);
      this.shell.succeeded(request);
    } catch (error) {
      if (isNotFound(error)) return;
      this.options.log.warn('could not remove the release finalizer; retrying', {
        request: request.key,
        error,
      });
      this.shell.retry(request, 'removeFinalizer', error, () => this.removeFinalizer(request));
    }
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
