// The fleet cache: every known worker's view (views.ts), built from its Worker object and its
// heartbeat Lease, with a revision that moves on every change of the view; the heartbeat's lapse is
// looked at when it falls due, through the work queue, instead of by polling. It tells its owner
// when routing may have changed and when a worker disconnected.
import { WorkerObject } from '../api/index.js';
import {
  WorkQueue,
  type Clock,
  type KubeObject,
  type Logger,
  type WorkQueueObserver,
} from '../runtime/index.js';
import type { WorkerView } from '../api/index.js';
import {
  buildWorker,
  parseHeartbeat,
  revisionKey,
  sameRouting,
  ViewRevisions,
  type Heartbeat,
  type KnownWorker,
} from './views.js';
import type { ApiContact } from './api-contact.js';
import type { Fleet } from './walk.js';

export interface FleetCacheOptions {
  clock: Clock;
  log: Logger;
  /** The Worker object by name, as the informer has it now. */
  lookup: (name: string) => KubeObject | undefined;
  /** Worker `name`'s view changed in a way routing reads (or it went): walk again. */
  routingChanged: (name: string) => void;
  /** A worker that was connected is not any more (its heartbeat lapsed, or it went away). */
  disconnected: (worker: string) => void;
  /**
   * What this process hears of the API server (its leader election's renewals): a lapse due while
   * it hears nothing is held (api-contact.ts). None: every lapse is judged when it falls due.
   */
  contact?: ApiContact | undefined;
  /** A worker's lapse was held for a silence of the API server. */
  lapseHeld?: (worker: string) => void;
  observer?: WorkQueueObserver | undefined;
}

export class FleetCache {
  private readonly workers = new Map<string, KnownWorker>();
  private readonly revisions = new ViewRevisions();
  private readonly heartbeats = new Map<string, Heartbeat>();
  private fleet: Fleet | undefined;
  /** Workers to look at again once their heartbeat may have lapsed. */
  private readonly lapses: WorkQueue;

  constructor(private readonly options: FleetCacheOptions) {
    this.lapses = new WorkQueue({
      name: 'workers',
      clock: options.clock,
      observer: options.observer,
      reconcile: (name) => {
        // A heartbeat renewed since the wake was asked for lapses later: look again then.
        const lapsesAt = this.workers.get(name)?.lapsesAt;
        const now = options.clock.now();
        if (lapsesAt === Infinity) return undefined;
        if (lapsesAt !== undefined && lapsesAt >= now)
          return { requeueAfterMs: lapsesAt - now + 1 };
        this.refresh(name, options.lookup(name));
        return undefined;
      },
    });
    // Renewals answered again: the lapses held meanwhile are judged (later, after a silence).
    options.contact?.onAnswerAfterHold(() => {
      for (const [name, worker] of this.workers)
        if (worker.lapsesAt === Infinity) this.refresh(name, options.lookup(name));
    });
  }

  get size(): number {
    return this.workers.size;
  }

  has(name: string): boolean {
    return this.workers.has(name);
  }

  view(name: string): WorkerView | undefined {
    return this.workers.get(name)?.view;
  }

  label(name: string): string | undefined {
    return this.workers.get(name)?.label;
  }

  revision(name: string): number | undefined {
    return this.revisions.get(name);
  }

  /** Every known worker's view, sorted by name, with its revision; the same object until a change. */
  current(): Fleet {
    if (!this.fleet) {
      const known = [...this.workers.values()].sort((a, b) =>
        a.view.name < b.view.name ? -1 : a.view.name > b.view.name ? 1 : 0,
      );
      this.fleet = {
        views: known.map((worker) => worker.view),
        viewRevisions: new Map(
          known.map((worker) => [worker.view.name, this.revisions.get(worker.view.name) ?? 0]),
        ),
      };
    }
    return this.fleet;
  }

  onHeartbeat(leaseName: string, object: KubeObject | undefined): void {
    if (!leaseName.startsWith('worker-')) return;
    const worker = leaseName.slice('worker-'.length);
    const heartbeat = object ? parseHeartbeat(object) : undefined;
    if (heartbeat) this.heartbeats.set(worker, heartbeat);
    else this.heartbeats.delete(worker);
    const workerObject = this.options.lookup(worker);
    if (workerObject) this.refresh(worker, workerObject);
  }

  /** The Worker object changed or went away (undefined). */
  refresh(name: string, object: KubeObject | undefined): void {
    const previous = this.workers.get(name);
    if (!object) {
      if (!previous) return;
      this.workers.delete(name);
      this.revisions.forget(name);
      this.fleet = undefined;
      this.options.routingChanged(name);
      return;
    }
    const parsed = WorkerObject.safeParse({ ...object, status: undefined });
    if (!parsed.success) {
      this.options.log.warn('worker object unreadable', { worker: name });
      return;
    }
    const now = this.options.clock.now();
    const contact = this.options.contact;
    const next = buildWorker(
      { metadata: parsed.data.metadata, spec: parsed.data.spec, status: object.status },
      this.heartbeats.get(name),
      now,
      contact && ((lapsesAt, durationMs) => contact.lapseOf(lapsesAt, durationMs, now)),
    );
    this.workers.set(name, next);
    this.revisions.observe(name, revisionKey(next));
    // A fresh heartbeat lapses at a known moment: look again then. A renewal moves the moment
    // later; the earlier wake then finds the worker still connected and asks again. A lapse held
    // is looked at again when the API server answers (the constructor's hook).
    if (next.lapsesAt === Infinity) {
      if (previous?.lapsesAt !== Infinity) {
        this.options.log.warn('heartbeat lapsed while the API server did not answer us; holding', {
          worker: name,
        });
        this.options.lapseHeld?.(name);
      }
    } else if (next.lapsesAt !== undefined) this.lapses.addAfter(name, next.lapsesAt - now + 1);
    // A worker that went away will not answer what was dispatched to it and not yet granted.
    if (previous?.view.connection === 'connected' && next.view.connection !== 'connected')
      this.options.disconnected(name);
    if (!sameRouting(previous, next)) {
      this.fleet = undefined;
      this.options.routingChanged(name);
    }
  }

  async stop(): Promise<void> {
    await this.lapses.shutDown();
  }
}
