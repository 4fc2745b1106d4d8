// What the soak sees of its requests and Leases, all the while: each request's outcomes, when it was
// granted and where, the Leases made for it (by uid, and which were Granted), and snapshots of every
// Lease (a LIST: consistent, which a relisting watch is not) to catch a device in two live Granted
// Leases at once. The invariants are counted from this.
import {
  REQUEST_NAMESPACE_LABEL,
  reasonsByWorker,
  type WorkerReasonItem,
} from '../../api/index.js';
import {
  Informer,
  coordinationLeasePath,
  simlockPath,
  type KubeClient,
  type KubeObject,
} from '../../runtime/index.js';
import { NAMESPACE, SYSTEM_NAMESPACE } from './fleet.js';

/** The soak's requests' Leases, wherever their workers' namespaces are (ADR 0034). */
const LEASES_OF_SOAK = `${REQUEST_NAMESPACE_LABEL}=${NAMESPACE}`;

/** The name of the request a Lease dispatches. */
function requestOf(lease: KubeObject): string {
  return (lease.spec as { request?: { name?: string } } | undefined)?.request?.name ?? '';
}

export type RequestKind = 'iphone' | 'physical' | 'ipad' | 'ipad-no-wait' | 'pinned';

export interface RequestRecord {
  kind: RequestKind;
  createdAt: number;
  grantedAt?: number;
  grantedOn?: string;
  /** granted, released, failed:CODE (failed: with no code is a violation). */
  outcomes: Set<string>;
  /**
   * Lease uid → worker, for every Lease made for it, with what the watch saw of it (time of day,
   * resourceVersion, phase, device; `deleted`): the story of a request granted under two Leases.
   */
  leases: Map<string, { worker: string; seenAt: number; seen: string[] }>;
  grantedLeases: Set<string>;
  deleted: boolean;
  /** The soak gave up deleting it (its harness's failure, reported apart): no verdict on it. */
  abandoned?: boolean;
}

interface RequestStatus {
  phase?: string;
  worker?: string;
  error?: { code?: string };
  workers?: WorkerReasonItem[];
}

/** f: the agent's finalizer on it, w: withdrawn, d: being deleted. */
function leaseFlags(lease: KubeObject): string {
  const metadata = lease.metadata as {
    finalizers?: string[];
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
  };
  return [
    (metadata.finalizers ?? []).length > 0 ? 'f' : '',
    Object.keys(metadata.annotations ?? {}).some((key) => key.includes('withdrawn')) ? 'w' : '',
    metadata.deletionTimestamp ? 'd' : '',
  ].join('');
}

function kindOf(request: KubeObject): RequestKind {
  const spec = request.spec as
    { physical?: boolean; model?: string; noWait?: boolean; requires?: string[] } | undefined;
  if (spec?.requires?.length) return 'pinned';
  if (spec?.physical) return 'physical';
  if (spec?.model === 'iPad Pro') return spec.noWait ? 'ipad-no-wait' : 'ipad';
  return 'iphone';
}

export class SoakWatch {
  readonly records = new Map<string, RequestRecord>();
  readonly requests: Informer;
  readonly leases: Informer;
  /** The agents' heartbeat Leases: a worker whose heartbeat lapsed is truly disconnected. */
  readonly heartbeats: Informer;
  /** Device in two live Granted Leases, as seen in a snapshot. */
  readonly doubleGrants: string[] = [];
  /** When the watch last saw each request change: a status read after a fault is a fresh one. */
  private readonly updatedAt = new Map<string, number>();
  snapshots = 0;
  private sampling = true;
  private sampler: Promise<void> | undefined;

  constructor(private readonly admin: KubeClient) {
    this.requests = new Informer(admin, {
      path: simlockPath('leaseRequest', { namespace: NAMESPACE }),
    });
    // The Leases of the soak's requests, in their workers' namespaces (ADR 0034).
    this.leases = new Informer(admin, {
      path: simlockPath('lease'),
      labelSelector: LEASES_OF_SOAK,
    });
    this.heartbeats = new Informer(admin, { path: coordinationLeasePath(SYSTEM_NAMESPACE) });
    this.leases.on((event) => {
      const { uid } = event.object.metadata;
      const name = requestOf(event.object);
      const record = this.record(name);
      const worker = (event.object.spec as { worker?: string } | undefined)?.worker ?? '';
      let lease = record.leases.get(String(uid));
      if (!lease) {
        lease = { worker, seenAt: Date.now(), seen: [] };
        record.leases.set(String(uid), lease);
      }
      const status = event.object.status as
        { phase?: string; device?: { id?: string } } | undefined;
      if (lease.seen.length < 20)
        lease.seen.push(
          [
            new Date().toISOString().slice(11, 23),
            event.object.metadata.resourceVersion,
            event.type === 'deleted' ? 'deleted' : (status?.phase ?? 'new'),
            status?.device?.id ?? '',
            leaseFlags(event.object),
          ].join(' '),
        );
      if (status?.phase === 'Granted') record.grantedLeases.add(String(uid));
    });
    this.requests.on((event) => {
      if (event.type === 'deleted') return;
      this.updatedAt.set(event.object.metadata.name, Date.now());
      const status = event.object.status as RequestStatus | undefined;
      // The watch may see a request before its create has answered: its kind is read off its spec.
      const record = this.record(event.object.metadata.name, kindOf(event.object));
      if (status?.phase === 'Granted') {
        record.outcomes.add('granted');
        record.grantedAt ??= Date.now();
        if (status.worker) record.grantedOn = status.worker;
      }
      if (status?.phase === 'Released') record.outcomes.add('released');
      if (status?.phase === 'Failed') record.outcomes.add(`failed:${status.error?.code ?? ''}`);
    });
  }

  /**
   * The record of `name`, made by whichever sees it first: the create (which knows when it began)
   * or the watch (a create that timed out may still have been stored).
   */
  record(name: string, kind: RequestKind = 'iphone', createdAt = Date.now()): RequestRecord {
    let record = this.records.get(name);
    if (record && createdAt < record.createdAt) record.createdAt = createdAt;
    if (!record) {
      record = {
        kind,
        createdAt,
        outcomes: new Set(),
        leases: new Map(),
        grantedLeases: new Set(),
        deleted: false,
      };
      this.records.set(name, record);
    }
    return record;
  }

  private get informers(): Informer[] {
    return [this.requests, this.leases, this.heartbeats];
  }

  async start(): Promise<void> {
    for (const informer of this.informers) informer.start();
    await Promise.all(this.informers.map((informer) => informer.waitForSync()));
    this.sampler = this.sample();
  }

  async stop(): Promise<void> {
    this.sampling = false;
    await this.sampler;
    await Promise.all(this.informers.map((informer) => informer.stop()));
  }

  status(name: string): RequestStatus | undefined {
    return this.requests.get(`${NAMESPACE}/${name}`)?.status as RequestStatus | undefined;
  }

  /** The worker's heartbeat has lapsed (or was never written) as the watch sees it now. */
  lapsed(worker: string): boolean {
    const spec = this.heartbeats.get(`${SYSTEM_NAMESPACE}/worker-${worker}`)?.spec as
      { renewTime?: string; leaseDurationSeconds?: number } | undefined;
    const renewed = Date.parse(spec?.renewTime ?? '');
    return !(renewed + (spec?.leaseDurationSeconds ?? 0) * 1000 > Date.now());
  }

  /** Requests waiting now whose status changed after `since`, with their reasons by worker. */
  waiting(since = 0): { name: string; reasons: Map<string, string> }[] {
    return this.requests.list().flatMap((object) => {
      const status = object.status as RequestStatus | undefined;
      if (status?.phase !== 'Waiting' || !status.workers?.length) return [];
      if ((this.updatedAt.get(object.metadata.name) ?? 0) <= since) return [];
      const reasons = new Map(
        reasonsByWorker(status).map((entry) => [
          entry.worker,
          entry.capacityReason ? `${entry.reason}/${entry.capacityReason}` : entry.reason,
        ]),
      );
      return [{ name: object.metadata.name, reasons }];
    });
  }

  /** The Lease of request `name`, as the watch has it (in its worker's namespace: ADR 0034). */
  leaseOf(name: string): KubeObject | undefined {
    return this.leases.list().find((lease) => requestOf(lease) === name);
  }

  private async sample(): Promise<void> {
    while (this.sampling) {
      try {
        const list = (await this.admin.get(simlockPath('lease'), {
          query: { labelSelector: LEASES_OF_SOAK },
        })) as { items: KubeObject[] };
        const holders = new Map<string, string>();
        for (const lease of list.items) {
          const status = lease.status as { phase?: string; device?: { id?: string } } | undefined;
          // A Lease being deleted is on its way out: its agent reclaims the device first and
          // lets the Lease go after, so the device may serve another lease meanwhile.
          if (status?.phase !== 'Granted' || !status.device?.id) continue;
          if (lease.metadata.deletionTimestamp) continue;
          const worker = (lease.spec as { worker?: string } | undefined)?.worker;
          const device = `${worker}/${status.device.id}`;
          const other = holders.get(device);
          if (other)
            this.doubleGrants.push(
              `${new Date().toISOString()} ${device} in ${other} and ${requestOf(lease)}`,
            );
          holders.set(device, requestOf(lease));
        }
        this.snapshots++;
      } catch {
        // the API server or etcd is restarting
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
