// A test playing the agents: it writes Worker objects and their status, renews or lets lapse
// their heartbeat Leases, and answers simlock Leases by writing their status, all through the real
// API server. Worker names are prefixed with the test's namespace (Workers are cluster-scoped) and
// labelled with it, so a controller started with that label selector sees only this file's fleet.
import type { GrantProgress, WorkerReasonItem, WorkerStatus } from '../../api/index.js';
import {
  heartbeatLeaseName,
  leaseNamespaceOf,
  LEASE_FINALIZER,
  REQUEST_NAMESPACE_LABEL,
} from '../../api/index.js';
import {
  Informer,
  coordinationLease,
  coordinationLeasePath,
  isConflict,
  isNotFound,
  microTime,
  simlockPath,
  type KubeClient,
} from '../../runtime/index.js';
import type { ClusterTestContext } from './harness.js';
import { eventually } from './harness.js';
import { aLeaseRequest } from '../fixtures/objects.js';
import { leaseOfRequest, makeLeaseNamespace, pathOfLease } from './leases.js';

export const FLEET_LABEL = 'simlock.dev/fleet';

type DeepPartial<T> = T extends (infer U)[]
  ? U[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

// The status builders live in test/fixtures/workers.ts (one copy for every kind of test).
export { iosFullStatus, iosStatus, physicalIphone } from '../fixtures/workers.js';

export interface LeaseAnswer {
  /** Pending: acknowledged, a device being prepared (a cold boot). */
  phase: 'Granted' | 'Refused' | 'Pending';
  message?: string;
  device?: {
    id: string;
    name: string;
    model: string;
    platform: 'ios' | 'android';
    os: string;
    physical: boolean;
  };
  refusal?: { code: string; message?: string; capacityReason?: unknown };
  /** While Pending: making or booting the device; null takes it off (an agent's grant does). */
  progress?: GrantProgress | null;
}

export class TestFleet {
  readonly admin: KubeClient;
  readonly namespace: string;

  private constructor(admin: KubeClient, namespace: string) {
    this.admin = admin;
    this.namespace = namespace;
  }

  private static count = 0;

  /** A fleet of its own: a fresh namespace (for requests, leases and heartbeats) and worker names. */
  static async create(cluster: ClusterTestContext): Promise<TestFleet> {
    const namespace = `${cluster.namespace}-${++TestFleet.count}`;
    await cluster.admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
    return new TestFleet(cluster.admin, namespace);
  }

  /** Where worker `short`'s Leases live (ADR 0034). */
  leaseNamespace(short: string): string {
    return leaseNamespaceOf(this.name(short));
  }

  /** Makes worker `short`'s Lease namespace, for a test that creates its Leases itself. */
  async makeLeaseNamespace(short: string): Promise<string> {
    return makeLeaseNamespace(this.admin, this.name(short));
  }

  /** The cluster-wide name of this file's worker `short` ("a" → "<namespace>-a"). */
  name(short: string): string {
    return `${this.namespace}-${short}`;
  }

  get selector(): string {
    return `${FLEET_LABEL}=${this.namespace}`;
  }

  async addWorker(
    short: string,
    options: { label?: string; drained?: boolean; status?: WorkerStatus; heartbeat?: boolean } = {},
  ): Promise<string> {
    const name = this.name(short);
    await this.admin.create(simlockPath('worker'), {
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'Worker',
      metadata: { name, labels: { [FLEET_LABEL]: this.namespace } },
      spec: {
        drained: options.drained ?? false,
        ...(options.label ? { label: options.label } : {}),
      },
    });
    if (options.status) await this.setStatus(short, options.status);
    if (options.heartbeat !== false) await this.heartbeat(short);
    return name;
  }

  async setStatus(short: string, status: WorkerStatus): Promise<void> {
    await this.admin.patch(
      simlockPath('worker', { name: this.name(short), subresource: 'status' }),
      { status },
    );
  }

  async patchStatus(short: string, status: DeepPartial<WorkerStatus>): Promise<void> {
    await this.admin.patch(
      simlockPath('worker', { name: this.name(short), subresource: 'status' }),
      { status },
    );
  }

  async drain(short: string, drained = true): Promise<void> {
    await this.admin.patch(simlockPath('worker', { name: this.name(short) }), {
      spec: { drained },
    });
  }

  /** Deletes the Worker (already gone counts); any other failure is the test's, and thrown. */
  async removeWorker(short: string): Promise<void> {
    await this.admin
      .delete(simlockPath('worker', { name: this.name(short) }))
      .catch(unlessNotFound);
  }

  /** Renews (or creates) the heartbeat Lease; `ageMs` back-dates the renewal. */
  async heartbeat(short: string, { durationSeconds = 30, ageMs = 0 } = {}): Promise<void> {
    const name = heartbeatLeaseName(this.name(short));
    const spec = {
      holderIdentity: this.name(short),
      leaseDurationSeconds: durationSeconds,
      renewTime: microTime(Date.now() - ageMs),
    };
    try {
      await this.admin.patch(coordinationLeasePath(this.namespace, name), { spec });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      await this.admin.create(
        coordinationLeasePath(this.namespace),
        coordinationLease({ name, namespace: this.namespace }, spec),
      );
    }
  }

  async createRequest(name: string, spec: Record<string, unknown>): Promise<void> {
    await this.admin.create(
      simlockPath('leaseRequest', { namespace: this.namespace }),
      aLeaseRequest(name).specAsGiven(spec).obj(),
    );
  }

  async request(name: string): Promise<RequestView> {
    return (await this.admin.get(
      simlockPath('leaseRequest', { namespace: this.namespace, name }),
    )) as RequestView;
  }

  /** Waits until the request's status satisfies `test`. */
  async requestWhere(
    name: string,
    test: (request: RequestView) => boolean,
    timeoutMs = 15_000,
  ): Promise<RequestView> {
    // A wait that runs out says what the request last was, so a failure can be read, not guessed.
    let last: RequestView | undefined;
    try {
      return await eventually(
        async () => {
          last = await this.request(name);
          return test(last) ? last : undefined;
        },
        { timeoutMs, what: `request ${name}` },
      );
    } catch (error) {
      const seen = last
        ? JSON.stringify({ metadata: last.metadata, status: last.status })
        : 'never read';
      throw new Error(`${(error as Error).message}; last seen: ${seen.slice(0, 4000)}`);
    }
  }

  async phase(name: string, phase: string, timeoutMs?: number): Promise<RequestView> {
    return this.requestWhere(name, (request) => request.status?.phase === phase, timeoutMs);
  }

  /** The Lease of request `name`, in its worker's namespace (ADR 0034). */
  async lease(name: string): Promise<LeaseView | undefined> {
    return leaseOfRequest<LeaseView>(this.admin, this.namespace, name);
  }

  /**
   * The test's workers reclaim at once: a Lease they granted has, once being deleted, the agent's
   * finalizer (which the controller puts on every Lease) taken off, as an agent does after
   * reclaiming the device. Leases they did not grant are left to the controller. Started by the
   * first answer, so a fleet of real agents is left to them.
   */
  private reclaimer: Informer | undefined;
  private readonly grantedByTest = new Set<string>();

  private startReclaimer(): void {
    if (this.reclaimer) return;
    this.reclaimer = new Informer(this.admin, {
      path: simlockPath('lease'),
      labelSelector: `${REQUEST_NAMESPACE_LABEL}=${this.namespace}`,
    });
    this.reclaimer.on(({ type, object }) => {
      const finalizers = (object.metadata.finalizers as string[] | undefined) ?? [];
      if (type === 'deleted' || !object.metadata.deletionTimestamp) return;
      const request = (object as unknown as LeaseView).spec.request?.name ?? '';
      if (!finalizers.includes(LEASE_FINALIZER) || !this.grantedByTest.has(request)) return;
      void this.reclaim(object as unknown as LeaseView, {
        finalizers: finalizers.filter((finalizer) => finalizer !== LEASE_FINALIZER),
        resourceVersion: object.metadata.resourceVersion,
      });
    });
    this.reclaimer.start();
  }

  /**
   * Waits for the request's Lease (a dispatch) and answers it as the worker would; `reclaims:
   * false` plays a worker that is gone after answering (nothing takes its finalizer off).
   */
  async answer(
    name: string,
    answer: LeaseAnswer,
    { reclaims = true }: { reclaims?: boolean } = {},
  ): Promise<LeaseView> {
    this.startReclaimer();
    const lease = await eventually(() => this.lease(name), { what: `lease ${name}` });
    if (answer.phase === 'Granted' && reclaims) this.grantedByTest.add(name);
    else this.grantedByTest.delete(name);
    await this.admin.patch(pathOfLease(lease, 'status'), { status: answer });
    return lease;
  }

  async grant(
    name: string,
    deviceId = 'sim-1',
    options: { reclaims?: boolean } = {},
  ): Promise<LeaseView> {
    return this.answer(
      name,
      {
        phase: 'Granted',
        device: {
          id: deviceId,
          name: 'iPhone 16',
          model: 'iPhone 16',
          platform: 'ios',
          os: '18.4',
          physical: false,
        },
      },
      options,
    );
  }

  async refuse(name: string, refusal: LeaseAnswer['refusal']): Promise<LeaseView> {
    return this.answer(name, { phase: 'Refused', ...(refusal ? { refusal } : {}) });
  }

  /** Waits until the request's Lease is gone (withdrawn by the controller). */
  async leaseGone(name: string): Promise<void> {
    await eventually(async () => ((await this.lease(name)) === undefined ? true : undefined), {
      what: `lease ${name} deleted`,
    });
  }

  /** Waits until the request itself is gone (its release finished). */
  async requestGone(name: string): Promise<void> {
    await eventually(
      async () =>
        (await this.request(name).then(
          () => false,
          (error: unknown) => isNotFound(error),
        ))
          ? true
          : undefined,
      { what: `request ${name} gone` },
    );
  }

  async events(name: string): Promise<string[]> {
    const list = (await this.admin.get(`/api/v1/namespaces/${this.namespace}/events`, {
      query: { fieldSelector: `involvedObject.name=${name}` },
    })) as { items: { reason: string; message: string }[] };
    return list.items.map((event) => `${event.reason}: ${event.message}`);
  }

  /** The request's Events with their times, as the API server keeps them. */
  async eventTimes(name: string): Promise<{ reason: string; firstTimestamp?: string }[]> {
    const list = (await this.admin.get(`/api/v1/namespaces/${this.namespace}/events`, {
      query: { fieldSelector: `involvedObject.name=${name}` },
    })) as { items: { reason: string; firstTimestamp?: string }[] };
    return list.items;
  }

  /**
   * Takes the finalizer off, tried again (5 times) while the API server fails; a failure after
   * that is thrown, unhandled, and fails the run: a Lease left with its finalizer would otherwise
   * read as the product's (never gone). Gone, or changed since (a conflict), is no failure: the
   * newer version comes as an event of its own.
   */
  private async reclaim(lease: LeaseView, metadata: Record<string, unknown>): Promise<void> {
    const path = pathOfLease(lease);
    for (let tries = 1; ; tries++) {
      try {
        await this.admin.patch(path, { metadata });
        return;
      } catch (error) {
        if (isNotFound(error) || isConflict(error)) return;
        if (tries >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * tries));
      }
    }
  }

  async cleanup(): Promise<void> {
    await this.reclaimer?.stop();
    const workers = (await this.admin.get(simlockPath('worker'), {
      query: { labelSelector: this.selector },
    })) as { items: { metadata: { name: string } }[] };
    await Promise.all(
      workers.items.map((worker) =>
        this.admin
          .delete(simlockPath('worker', { name: worker.metadata.name }))
          .catch(() => undefined),
      ),
    );
  }
}

/** Who wrote which part of an object, as the API server records it (metadata.managedFields). */
export interface ManagedBy {
  manager?: string;
  operation?: string;
  subresource?: string;
}

export interface RequestView {
  metadata: { name: string; finalizers?: string[]; uid: string; managedFields?: ManagedBy[] };
  status?: {
    phase: string;
    /** The wire form: read it per worker with reasonsByWorker (ADR 0033). */
    workers?: WorkerReasonItem[];
    summary?: string;
    position?: number;
    worker?: string;
    lease?: string;
    device?: { id: string; name: string; physical: boolean };
    progress?: GrantProgress;
    error?: { code: string; message: string; details?: Record<string, string> };
    conditions?: { type: string; status: string; reason: string }[];
  };
}

export interface LeaseView {
  metadata: {
    name: string;
    namespace?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string }[];
    finalizers?: string[];
    resourceVersion?: string;
    managedFields?: ManagedBy[];
    uid?: string;
    deletionTimestamp?: string;
  };
  spec: {
    worker: string;
    request?: { namespace: string; name: string; uid: string };
    device: Record<string, unknown>;
    expiresAt: string;
  };
  status?: { phase: string };
}

function unlessNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}
