// The agent's one table of its Leases, beside its one work queue (agent.ts): for each Lease key, the
// Lease object this process granted or adopted (its uid), and the writes about it still owed (an
// expiry to mark, device health to tell). A write that fails stays owed and the key goes back on
// the queue with its backoff; the queue's next turn for the key makes every owed write, reading
// what is true then, so no write is dropped and none is stale.
//
// Why the uid is kept here and not asked of the granter: the granter forgets a lease as soon as its
// device is reclaimed (it expired) or lost (it crashed), while the Lease object still reads Granted
// until our write lands; an event meanwhile must not take it for a Lease of an earlier life and
// adopt its device again. The entry goes when the Lease is reclaimed or its grant did not land.

export interface LeaseEntry {
  /** The uid of the Lease object granted or adopted here. */
  grantedUid?: string | undefined;
  /** The lease reached its expiry here: phase Expired is to be written. */
  expiryOwed?: boolean;
  /** The device crashed, recovered or was lost: the Lease is to say so (device-health-write.ts). */
  healthOwed?: boolean;
}

export class LeaseTable {
  readonly #entries = new Map<string, LeaseEntry>();

  get(key: string): LeaseEntry | undefined {
    return this.#entries.get(key);
  }

  grantedUid(key: string): string | undefined {
    return this.#entries.get(key)?.grantedUid;
  }

  /** Changes the key's entry; an entry left with nothing in it goes. */
  update(key: string, change: Partial<LeaseEntry>): void {
    const entry = { ...this.#entries.get(key), ...change };
    if (entry.grantedUid === undefined && !entry.expiryOwed && !entry.healthOwed) {
      this.#entries.delete(key);
    } else {
      this.#entries.set(key, entry);
    }
  }
}
