// The agent's answer to a new Lease: the core's planner grants a device or refuses, and the answer
// is written onto the Lease as last seen or written (a resourceVersion precondition), so that a
// Lease deleted or withdrawn meanwhile makes the write fail and the device goes back: the grant and
// the controller's withdrawal never both win (ADR 0005). The grant is a status PUT of the Lease's
// whole status (ADR 0014): cheaper for the API server than a merge patch. A cold boot is
// acknowledged first; a step that should take at least as long as that (making the device, booting
// it) is written as it begins, with this host's estimate, so the holder sees where its grant is.
import { LEASE_FINALIZER, type LeaseObject } from '../../api/index.js';
import {
  isConflict,
  isNotFound,
  patchedStatus,
  resourceVersionOf,
  simlockPath,
  statusOf,
  statusReplacement,
  type Clock,
  type KubeClient,
  type Logger,
} from '../../runtime/index.js';
import type { AgentCore } from '../core.js';
import type { GrantStep } from '../granter.js';

export interface AnswerContext {
  client: KubeClient;
  core: AgentCore;
  clock: Clock;
  log: Logger;
  /** After this long without an answer, the answer writes an acknowledgement (status Pending). */
  acknowledgeAfterMs: number;
  /** Notes that this process granted the Lease object `uid` under `key` (the agent's table). */
  granted: (key: string, uid: string) => void;
  /** The grant did not land (the Lease changed or went meanwhile): nothing is held for `key`. */
  ungranted: (key: string) => void;
  /** The grant's answer, the Lease as written onto version `basedOn`: known at once, not at its event. */
  wrote: (answer: unknown, basedOn: string | undefined) => void;
}

export async function answerLease(
  context: AnswerContext,
  key: string,
  lease: LeaseObject,
): Promise<void> {
  const { core, client, clock, log, granted, ungranted } = context;
  const [namespace, name] = [lease.metadata.namespace ?? '', lease.metadata.name];
  const statusPath = simlockPath('lease', { namespace, name, subresource: 'status' });
  // Every write of our answer is made onto the Lease as we last saw or wrote it (a
  // resourceVersion precondition): a Lease deleted or withdrawn meanwhile makes it fail (a
  // conflict), and we give the device back, so the grant and the withdrawal never both win.
  let expectedVersion = lease.metadata.resourceVersion;
  // The status at that version: the grant replaces it whole, so it keeps what it does not change.
  let knownStatus: Record<string, unknown> | undefined = lease.status;
  // Our Pending writes (the acknowledgement, the steps), one after another, each onto the last.
  let pendingWrites: Promise<void> = Promise.resolve();
  const writePending = (status: Record<string, unknown>): void => {
    pendingWrites = pendingWrites.then(() =>
      client
        .patch(statusPath, { metadata: { resourceVersion: expectedVersion }, status })
        .then((written) => {
          const version = resourceVersionOf(written);
          if (version === undefined) return;
          expectedVersion = version;
          knownStatus = statusOf(written);
        })
        // Not retried: a lost Pending write only means the controller may give up sooner or the
        // holder sees less; the grant follows, onto whatever version we know.
        .catch(() => undefined),
    );
  };
  // A cold boot takes a while: tell the controller the Lease is being worked on. A timer of this
  // answer's own, not a delayed add to the agent's work queue: the queue runs one Lease's work at a
  // time, and this answer is that work until it ends, which is when the acknowledgement stops
  // being wanted.
  const acknowledgement = clock.setTimeout(
    () => writePending({ phase: 'Pending', message: 'accepted: preparing the device' }),
    context.acknowledgeAfterMs,
  );
  const acknowledge = { cancel: () => clock.clearTimeout(acknowledgement) };
  const onStep = (step: GrantStep): void => {
    const ms = step.estimate.ms;
    if (ms === undefined || ms < context.acknowledgeAfterMs) return;
    acknowledge.cancel(); // this write says more than the acknowledgement would
    const seconds = Math.round(ms / 1000);
    writePending({
      phase: 'Pending',
      message: `${step.stage} ${step.device.model} (${step.device.os}), about ${seconds} s`,
      progress: {
        stage: step.stage,
        since: new Date(step.startedAtMs).toISOString(),
        model: step.device.model,
        os: step.device.os,
        estimatedSeconds: seconds,
        basis: step.estimate.basis,
      },
    });
  };
  try {
    const expiresAt = Date.parse(lease.spec.expiresAt);
    const outcome = await core.grant(
      key,
      lease.spec.device,
      Number.isFinite(expiresAt) ? expiresAt : undefined,
      onStep,
    );
    acknowledge.cancel();
    // A Pending write in flight lands first, or fails, before the answer is written.
    await pendingWrites;
    if (outcome.kind === 'refused') {
      const { code, message, capacityReason } = outcome.refusal;
      await client.patch(statusPath, {
        status: {
          phase: 'Refused',
          refusal: { code, message, ...(capacityReason ? { capacityReason } : {}) },
          progress: null,
        },
      });
      log.info('refused', { lease: key, code, capacityReason });
      return;
    }
    const grant = {
      status: {
        phase: 'Granted',
        device: outcome.lease.device,
        source: outcome.lease.source,
        grantedAt: new Date(clock.now()).toISOString(),
        message: null,
        progress: null,
      },
    };
    try {
      if ((lease.metadata.finalizers ?? []).includes(LEASE_FINALIZER) && expectedVersion) {
        // The controller created the Lease holding our finalizer: the grant is one write, a PUT
        // of the status onto the version we saw (a 409 if the Lease changed since).
        granted(key, lease.metadata.uid ?? '');
        const written = await client.replace(
          statusPath,
          statusReplacement(
            { resource: 'lease', namespace, name, resourceVersion: expectedVersion },
            patchedStatus(knownStatus, grant.status),
          ),
        );
        // An exec may follow the grant before our watch brings it (http.ts reads the Leases
        // the agent knows): the Lease as written is known at once.
        context.wrote(written, expectedVersion);
      } else {
        // A Lease made without it: hold the Lease until the device is reclaimed, the
        // finalizer first, then the grant.
        await client.patch(simlockPath('lease', { namespace, name }), {
          metadata: { finalizers: [LEASE_FINALIZER], resourceVersion: expectedVersion },
        });
        granted(key, lease.metadata.uid ?? '');
        await client.patch(statusPath, grant);
      }
    } catch (error) {
      if (!isNotFound(error) && !isConflict(error)) throw error;
      // Deleted or changed while we decided: give the device back. The change that beat us
      // comes as an event (now, or already while this work ran: then the queue looks again).
      ungranted(key);
      await core.reclaim(key);
      return;
    }
    log.info('granted', {
      lease: key,
      device: outcome.lease.device.id,
      source: outcome.lease.source,
    });
  } catch (error) {
    acknowledge.cancel();
    log.warn('answering a lease failed', { lease: key, error });
  }
}
