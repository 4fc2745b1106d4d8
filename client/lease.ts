// Asking for a device: create the LeaseRequest, follow it until it ends (client/wait.ts), and
// answer the granted request or throw the error it ended with (its code: NO_CAPACITY,
// UNKNOWN_MODEL, TIMEOUT, …). A stop (the caller's signal) withdraws the request, and so does a
// wait that cannot go on: nothing is left behind that nobody waits for.
import {
  API_VERSION,
  LeaseRequestObject,
  REQUEST_FINALIZER,
  RESOURCES,
  SimlockError,
  formatDuration,
  type ErrorCode,
  type LeaseRequestSpec,
  type WorkerObject,
} from '../api/index.js';
import {
  KubeUnavailableError,
  isNotFound,
  simlockPath,
  type KubeClient,
} from '../runtime/index.js';
import { LeaseCancelledError } from './errors.js';
import { parseAnswer, workersForLabels, type Parsed } from './kube.js';
import { progressOf, workerLabels, type LeaseProgress } from './progress.js';
import { waitForEnd } from './wait.js';

/**
 * The controller fails a request that waited past its timeout itself (TIMEOUT); the client gives
 * up this much later, for a controller that is not running at all.
 */
const CONTROLLER_GRACE_MS = 60_000;

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

export interface RequestLeaseOptions {
  /** The request's name; otherwise the API server makes one from `lease-`. */
  name?: string | undefined;
  /** An object whose deletion releases the lease (the garbage collector deletes the request). */
  owner?: OwnerReference | undefined;
  /** Aborted: the request is withdrawn and the call rejects with LeaseCancelledError. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: LeaseProgress) => void) | undefined;
  /** Every version of the request seen, as read (the plugin draws its own display from it). */
  onRequest?: ((request: Parsed<LeaseRequestObject>) => void) | undefined;
  /** Workers to name by label; read when not given. */
  workers?: readonly WorkerObject[] | undefined;
  warn?: ((message: string) => void) | undefined;
  /** Watches are reopened after this long (below the request timeout). */
  watchSeconds?: number | undefined;
}

/** Watches are reopened before the request timeout would cut them (0: no timeout). */
export function watchSecondsFor(requestTimeoutMs: number): number {
  if (requestTimeoutMs <= 0) return 60;
  return Math.max(1, Math.min(60, Math.floor(requestTimeoutMs / 1000) - 2));
}

/** The spec must already be parsed (LeaseRequestSpec): the API server checks the same rules. */
export async function requestLease(
  client: KubeClient,
  namespace: string,
  spec: LeaseRequestSpec,
  options: RequestLeaseOptions = {},
): Promise<Parsed<LeaseRequestObject>> {
  const warn = options.warn ?? (() => undefined);
  const created = parseAnswer(
    LeaseRequestObject,
    await client.create(simlockPath('leaseRequest', { namespace }), {
      apiVersion: API_VERSION,
      kind: RESOURCES.leaseRequest.kind,
      metadata: {
        ...(options.name !== undefined ? { name: options.name } : { generateName: 'lease-' }),
        // The controller's release finalizer from the start saves it a write (ADR 0005).
        finalizers: [REQUEST_FINALIZER],
        ...(options.owner ? { ownerReferences: [options.owner] } : {}),
      },
      spec,
    }),
    'leaserequest',
  );
  const name = created.object.metadata.name;
  const signal = options.signal ?? new AbortController().signal;
  const cancelled = async () =>
    new LeaseCancelledError(name, await tryWithdraw(client, namespace, name));
  if (signal.aborted) throw await cancelled();

  const label = workerLabels(options.workers ?? (await workersForLabels(client, warn)));
  const waitMs = (spec.noWait === true ? 0 : spec.waitTimeoutSeconds * 1000) + CONTROLLER_GRACE_MS;
  const outcome = await waitForEnd(client, namespace, name, {
    signal,
    deadline: Date.now() + waitMs,
    now: () => Date.now(),
    onChange: (request) => {
      options.onRequest?.(request);
      options.onProgress?.(progressOf(request.object, label));
    },
    watchSeconds: options.watchSeconds ?? 60,
  }).catch(async (error: unknown) => {
    await tryWithdraw(client, namespace, name);
    throw error;
  });
  switch (outcome.kind) {
    case 'stopped':
      throw await cancelled();
    case 'deleted':
      throw new SimlockError('WITHDRAWN', `request ${name} was deleted before it was granted`, {
        request: name,
      });
    case 'deadline': {
      const withdrawn = await tryWithdraw(client, namespace, name);
      if (outcome.lastError instanceof KubeUnavailableError) {
        throw new SimlockError(
          'UNAVAILABLE',
          `lost the cluster while waiting (${outcome.lastError.message}); ${withdrawn}`,
        );
      }
      throw new SimlockError(
        'TIMEOUT',
        `no answer within ${formatDuration(Math.round(waitMs / 1000))} (is the controller running?); ${withdrawn}`,
      );
    }
    default:
      return granted(outcome.request);
  }
}

/** The request as it ended: granted, or the error it failed with. */
function granted(request: Parsed<LeaseRequestObject>): Parsed<LeaseRequestObject> {
  const { status, metadata } = request.object;
  if (status?.phase === 'Failed') {
    const error = status.error ?? {
      code: 'INTERNAL' as ErrorCode,
      message: 'failed without a reason',
    };
    throw new SimlockError(error.code, error.message, error.details);
  }
  if (status?.phase !== 'Granted') {
    throw new SimlockError(
      'LEASE_LOST',
      `the lease of request ${metadata.name} ended (${status?.phase ?? 'unknown'}) before it was reported`,
    );
  }
  return request;
}

/** Deletes the request (the controller releases anything it got); says how that went. */
export async function tryWithdraw(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<string> {
  try {
    await client.delete(simlockPath('leaseRequest', { namespace, name }));
  } catch (error) {
    if (!isNotFound(error)) {
      const reason = error instanceof Error ? error.message : String(error);
      return `request ${name} could not be withdrawn (${reason}): delete it with kubectl simlock release ${name}`;
    }
  }
  return `request ${name} withdrawn`;
}
