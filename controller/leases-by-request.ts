// The Leases of each request, by the request's UID (spec.request), as the Lease informer has them:
// never by name, so a Lease of an earlier request of the same name is not the new one's. One, but
// for the moments a Lease of an earlier dispatch lingers: ADR 0034 puts each worker's Leases in a
// namespace of their own, so two of one request can be there at once (its amendment).
import type { Informer } from '../runtime/index.js';
import { parseLease, type ParsedLease } from './parsed-lease.js';

export class LeasesByRequest {
  private readonly keys = new Map<string, Set<string>>();

  /** Subscribes to `informer`: do it before any handler that looks Leases up by request. */
  constructor(private readonly informer: Informer) {
    informer.on((event) => {
      const lease = parseLease(event.object);
      if (lease?.requestUid === undefined) return;
      const keys = this.keys.get(lease.requestUid) ?? new Set<string>();
      if (event.type !== 'deleted') this.keys.set(lease.requestUid, keys.add(lease.key));
      else if (keys.delete(lease.key) && keys.size === 0) this.keys.delete(lease.requestUid);
    });
  }

  /** Every Lease of the request. */
  all(request: { uid: string }): ParsedLease[] {
    const leases: ParsedLease[] = [];
    for (const key of this.keys.get(request.uid) ?? []) {
      const object = this.informer.get(key);
      const lease = object ? parseLease(object) : undefined;
      if (lease) leases.push(lease);
    }
    return leases;
  }

  /** Of several, one its agent granted and nobody lets go of: the one on `worker` first. */
  granted(request: { uid: string }, worker?: string): ParsedLease | undefined {
    const held = this.all(request).filter(
      (lease) => lease.status?.phase === 'Granted' && !lease.lettingGo,
    );
    return held.find((lease) => lease.worker === worker) ?? held[0];
  }

  /** Of several, the one on `worker` (the worker its life names), else one not being deleted. */
  one(request: { uid: string }, worker?: string): ParsedLease | undefined {
    const leases = this.all(request);
    return (
      (worker === undefined ? undefined : leases.find((lease) => lease.worker === worker)) ??
      leases.find((lease) => !lease.deleting) ??
      leases[0]
    );
  }
}
