// The typed client (docs/CLIENT.md): a connection from the kubeconfig, and the calls a program
// or a coding agent makes: lease, list, workers, requests.
import type { z } from 'zod';
import {
  LeaseRequestObject,
  LeaseRequestSpec,
  SimlockError,
  type WorkerObject,
} from '../api/index.js';
import { simlockPath, type KubeClient } from '../runtime/index.js';
import { connect, type ConnectOptions } from './connect.js';
import { toSimlockError } from './errors.js';
import { ProxyAccess, type ProxyOptions } from './exec.js';
import { LeaseHandle } from './handle.js';
import { HolderSession } from './holder-session.js';
import { getObject, listHeldLeases, listRequests, listWorkers } from './kube.js';
import { requestLease, watchSecondsFor, type OwnerReference } from './lease.js';
import type { LeaseProgress } from './progress.js';
import type { DeviceRecoveryNotice } from './recovery.js';

export type ClientOptions = ConnectOptions & ProxyOptions;

/** What to lease: the LeaseRequest spec (api/schemas.ts) as a caller writes it, defaults left out. */
export type LeaseSpecInput = Omit<
  z.input<typeof LeaseRequestSpec>,
  'holderSession' | 'holderRenewSeconds'
>;

export interface LeaseOptions {
  /** Aborted while it waits: the request is withdrawn; the call rejects with LeaseCancelledError. */
  signal?: AbortSignal | undefined;
  onProgress?: ((progress: LeaseProgress) => void) | undefined;
  /** The request's name; otherwise `lease-<random>`. */
  name?: string | undefined;
  /** An object (a Pod) whose deletion releases the lease. */
  owner?: OwnerReference | undefined;
  /**
   * Keep the lease only while this process lives: a holder session renewed every third of
   * `renewSeconds` (default 10); when it stops being renewed the controller releases the lease
   * (HolderGone). Or a session shared by several leases (`session`), which the caller stops.
   */
  hold?: boolean | { renewSeconds?: number } | { session: HolderSession } | undefined;
  /** Problems that do not stop the call (a worker list that cannot be read). */
  warn?: ((message: string) => void) | undefined;
  /**
   * Once granted: told when the device crashes and is booted again under the lease, and when it
   * is back (LeaseHandle.onRecovery; stopped on release).
   */
  onRecovery?: ((notice: DeviceRecoveryNotice) => void) | undefined;
}

export interface ListOptions {
  /** Every namespace, not only the client's. */
  allNamespaces?: boolean | undefined;
}

/** The first problem of a value checked against a contract schema, naming its field. */
function fieldError(error: { issues: readonly { path: PropertyKey[]; message: string }[] }) {
  const issue = error.issues[0];
  const field = issue?.path.map(String).join('.') ?? '';
  return new SimlockError('USAGE', `${field || 'spec'}: ${issue?.message ?? 'invalid value'}`, {
    field,
  });
}

export class SimlockClient {
  readonly proxy: ProxyAccess;

  constructor(
    readonly kube: KubeClient,
    readonly namespace: string,
    private readonly options: ProxyOptions & { requestTimeoutMs?: number } = {},
  ) {
    this.proxy = new ProxyAccess(kube, options);
  }

  /** Connects as kubectl would (the kubeconfig, its context and namespace, or the options'). */
  static connect(options: ClientOptions = {}): SimlockClient {
    const connection = connect(options);
    return new SimlockClient(connection.kube, connection.namespace, {
      ...options,
      requestTimeoutMs: connection.requestTimeoutMs,
    });
  }

  /**
   * Asks for a device and waits for it. Resolves once granted; rejects with a SimlockError whose
   * code says why not (NO_CAPACITY, UNKNOWN_MODEL, TIMEOUT, …).
   */
  async lease(spec: LeaseSpecInput, options: LeaseOptions = {}): Promise<LeaseHandle> {
    const hold = options.hold;
    const shared = typeof hold === 'object' && 'session' in hold ? hold.session : undefined;
    const renewSeconds =
      hold === true
        ? 10
        : typeof hold === 'object' && 'renewSeconds' in hold
          ? (hold.renewSeconds ?? 10)
          : undefined;
    const checked = LeaseRequestSpec.safeParse({
      ...spec,
      ...(shared
        ? { holderSession: shared.name, holderRenewSeconds: shared.renewSeconds }
        : renewSeconds !== undefined
          ? { holderSession: 'pending', holderRenewSeconds: renewSeconds }
          : {}),
    });
    if (!checked.success) throw fieldError(checked.error);
    const own =
      renewSeconds !== undefined && !shared
        ? await HolderSession.start(
            this.kube,
            this.namespace,
            renewSeconds,
            options.warn ?? (() => undefined),
          )
        : undefined;
    if (own) checked.data.holderSession = own.name;
    try {
      const granted = await requestLease(this.kube, this.namespace, checked.data, {
        name: options.name,
        owner: options.owner,
        signal: options.signal,
        onProgress: options.onProgress,
        warn: options.warn,
        watchSeconds: watchSecondsFor(this.options.requestTimeoutMs ?? 30_000),
      });
      const handle = new LeaseHandle(granted.object, this.kube, this.proxy, own);
      if (options.onRecovery)
        handle.onRecovery(options.onRecovery, {
          watchSeconds: watchSecondsFor(this.options.requestTimeoutMs ?? 30_000),
        });
      // The request says its expiry once the controller has written it (with the grant, or in the
      // status write after it): read once more when the grant came without it.
      handle.expiresAt ??= await getObject(
        this.kube,
        simlockPath('leaseRequest', { namespace: this.namespace, name: handle.name }),
        LeaseRequestObject,
        'leaserequest',
      ).then(
        (request) => request.object.status?.expiresAt,
        () => undefined,
      );
      return handle;
    } catch (error) {
      await own?.stop();
      throw toSimlockError(error);
    }
  }

  /**
   * The leases (granted, or being released) in the client's namespace, or in all: their requests,
   * which say the grant (status.worker, device, expiresAt) wherever the Lease lives (ADR 0034).
   */
  async list(options: ListOptions = {}): Promise<LeaseRequestObject[]> {
    const leases = await listHeldLeases(
      this.kube,
      this.namespaceFor(options),
      () => undefined,
    ).catch((error: unknown) => Promise.reject(toSimlockError(error)));
    return leases.map((lease) => lease.object);
  }

  /** The requests not yet ended, each with its per-worker reasons while it waits. */
  async requests(options: ListOptions = {}): Promise<LeaseRequestObject[]> {
    const requests = await listRequests(
      this.kube,
      this.namespaceFor(options),
      () => undefined,
    ).catch((error: unknown) => Promise.reject(toSimlockError(error)));
    return requests.map((request) => request.object);
  }

  /** The Workers: device hosts, their devices and their agents' own queues. */
  async workers(): Promise<WorkerObject[]> {
    const workers = await listWorkers(this.kube, () => undefined).catch((error: unknown) =>
      Promise.reject(toSimlockError(error)),
    );
    return workers.map((worker) => worker.object);
  }

  private namespaceFor(options: ListOptions): string | undefined {
    return options.allNamespaces === true ? undefined : this.namespace;
  }
}
