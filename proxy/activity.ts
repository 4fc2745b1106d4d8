// Exec activity on leases, recorded cheaply for idle reclaim (ADR 0008): the Lease's
// status.activity says when an exec last ran and that one runs at least until `runningUntil`.
//
// While an exec runs, the record says "running until ACTIVITY_RUNNING_HORIZON_MS from now": written
// at once when an exec starts and no running record of this proxy is out, then renewed every
// ACTIVITY_WRITE_INTERVAL_MS while any runs, so the controller never reclaims a lease an exec is
// running on. When the last one ends, its end is written at the next turn (at most an interval
// after the last write): `lastExecAt` and `runningUntil` both at the end, so idle counts from it.
// Only a proxy that died leaves its horizon behind, which then lapses by itself.
//
// With several replicas, an end must never cut short the record of a replica whose exec still
// runs. So an end replaces only this replica's own running record (a JSON patch whose `test` fails
// if another write came since), or an end, or a lapsed record, earlier than itself. Why that is
// safe: a replica with an exec running renews within an interval, so its record is newer than any
// running record whose end falls due (that end comes an interval after its write); and an exec that
// starts once another replica's end is out finds no running record of its own out (its last turn
// found it superseded, or ended it), so it is written at once. An end that finds another replica's
// running record looks again at its next turn: that exec may end earlier than this one did.
// Writes per lease: one per interval while execs run, plus an end, plus a start right after one.
import {
  ACTIVITY_RUNNING_HORIZON_MS,
  ACTIVITY_WRITE_INTERVAL_MS,
  LeaseObject,
} from '../api/index.js';
import {
  KubeApiError,
  isNotFound,
  simlockPath,
  systemClock,
  type Clock,
  type KubeClient,
  type Logger,
  type TimerHandle,
} from '../runtime/index.js';

/** What one write records on the Lease's status. */
export interface ActivityRecord {
  lastExecAt: string;
  runningUntil: string;
}

/** Where the records go: the Lease's status. Both throw NotFound when the Lease is gone. */
export interface ActivityStore {
  /** Writes the record; with `expected`, only while the Lease carries exactly that record. */
  write(
    namespace: string,
    name: string,
    record: ActivityRecord,
    expected?: ActivityRecord,
  ): Promise<'written' | 'superseded'>;
  /** The record the Lease carries now. */
  read(namespace: string, name: string): Promise<ActivityRecord | undefined>;
}

/** The store of the proxy: the Lease's status subresource. */
export function leaseStatusActivityStore(client: KubeClient): ActivityStore {
  return {
    async write(namespace, name, record, expected) {
      const path = simlockPath('lease', { namespace, name, subresource: 'status' });
      if (expected === undefined) {
        await client.patch(path, { status: { activity: record } });
        return 'written';
      }
      try {
        await client.patch(
          path,
          [
            { op: 'test', path: '/status/activity/lastExecAt', value: expected.lastExecAt },
            { op: 'test', path: '/status/activity/runningUntil', value: expected.runningUntil },
            { op: 'replace', path: '/status/activity', value: record },
          ],
          'json',
        );
        return 'written';
      } catch (error) {
        // kube-apiserver answers a failed `test` (or a path that is not there) 422 Invalid.
        if (error instanceof KubeApiError && error.status === 422) return 'superseded';
        throw error;
      }
    },
    async read(namespace, name) {
      const lease = LeaseObject.safeParse(
        await client.get(simlockPath('lease', { namespace, name })),
      );
      const activity = lease.success ? lease.data.status?.activity : undefined;
      return activity?.runningUntil === undefined
        ? undefined
        : { lastExecAt: activity.lastExecAt, runningUntil: activity.runningUntil };
    },
  };
}

/** A failed write is tried again this long after. */
const RETRY_MS = 1000;

interface LeaseActivity {
  running: number;
  /** An exec started since the last running record was written (it may have ended since). */
  pending: boolean;
  /** When the last exec ended. */
  lastEndedAt: number;
  lastWriteAt: number;
  /** This replica's running record on the Lease, as far as it knows: what its end replaces. */
  written: ActivityRecord | undefined;
  /** An end whose own record another replica's write had replaced: written over an earlier one. */
  endToWrite: number | undefined;
  timer: TimerHandle | undefined;
  /** A turn is on its way; the next is set when it is done. */
  busy: boolean;
}

export interface ActivityRecorderOptions {
  store: ActivityStore;
  log: Logger;
  clock?: Clock;
  intervalMs?: number;
  horizonMs?: number;
}

export class ActivityRecorder {
  private readonly leases = new Map<string, LeaseActivity>();
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly horizonMs: number;

  constructor(private readonly options: ActivityRecorderOptions) {
    this.clock = options.clock ?? systemClock();
    this.intervalMs = options.intervalMs ?? ACTIVITY_WRITE_INTERVAL_MS;
    this.horizonMs = options.horizonMs ?? ACTIVITY_RUNNING_HORIZON_MS;
  }

  /** An exec started on the lease; call the answer when it ends. */
  started(namespace: string, name: string): () => void {
    const key = `${namespace}/${name}`;
    const lease = this.leases.get(key) ?? {
      running: 0,
      pending: false,
      lastEndedAt: -Infinity,
      lastWriteAt: -Infinity,
      written: undefined,
      endToWrite: undefined,
      timer: undefined,
      busy: false,
    };
    this.leases.set(key, lease);
    lease.running += 1;
    lease.pending = true;
    // Covered by our own running record until our next turn; with none out, written at once.
    this.schedule(
      key,
      lease,
      lease.written ? lease.lastWriteAt + this.intervalMs - this.clock.now() : 0,
    );
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      lease.running -= 1;
      lease.lastEndedAt = this.clock.now();
      // Written at the next turn, which is set already (a lease has one while anything is due).
    };
  }

  stop(): void {
    for (const lease of this.leases.values()) if (lease.timer) this.clock.clearTimeout(lease.timer);
    this.leases.clear();
  }

  private schedule(key: string, lease: LeaseActivity, delayMs: number): void {
    if (lease.busy) return;
    if (lease.timer !== undefined) {
      // Only a start with no record of ours out comes before a turn set already.
      if (delayMs > 0) return;
      this.clock.clearTimeout(lease.timer);
    }
    lease.timer = this.clock.setTimeout(
      () => {
        lease.timer = undefined;
        void this.turn(key, lease);
      },
      Math.max(0, delayMs),
    );
  }

  /** A turn: the running record written or renewed, or the end written; then the next turn. */
  private async turn(key: string, lease: LeaseActivity): Promise<void> {
    const [namespace = '', name = ''] = key.split('/');
    lease.busy = true;
    let next: number | 'done';
    try {
      next = await this.write(namespace, name, lease);
      // An exec that started while an end was being written is written at once.
      if (lease.pending && lease.written === undefined) next = 0;
    } catch (error) {
      if (isNotFound(error)) {
        // The Lease is gone: nothing more to write for it.
        lease.busy = false;
        if (this.leases.get(key) === lease) this.leases.delete(key);
        return;
      }
      this.options.log.warn('could not record exec activity; retrying', { lease: key, error });
      next = RETRY_MS;
    }
    lease.busy = false;
    if (this.leases.get(key) !== lease) return;
    if (next === 'done' && lease.running === 0) this.leases.delete(key);
    else this.schedule(key, lease, next === 'done' ? this.intervalMs : next);
  }

  /** Writes what is due; answers when the next turn is, or 'done' when nothing more is. */
  private async write(
    namespace: string,
    name: string,
    lease: LeaseActivity,
  ): Promise<number | 'done'> {
    const { store } = this.options;
    const now = this.clock.now();
    // Running now, or ran since our last record with none of ours out: written as running (its end
    // follows at the next turn).
    if (lease.running > 0 || (lease.pending && lease.written === undefined)) {
      const record = { lastExecAt: iso(now), runningUntil: iso(now + this.horizonMs) };
      lease.pending = false;
      lease.lastWriteAt = now;
      try {
        await store.write(namespace, name, record);
      } catch (error) {
        lease.pending = true;
        throw error;
      }
      lease.written = record;
      lease.endToWrite = undefined;
      return this.intervalMs;
    }
    const end = lease.lastEndedAt;
    const endRecord = { lastExecAt: iso(end), runningUntil: iso(end) };
    if (lease.written !== undefined) {
      lease.lastWriteAt = now;
      lease.pending = false;
      if ((await store.write(namespace, name, endRecord, lease.written)) === 'written') {
        lease.written = undefined;
        return 'done';
      }
      // Another replica wrote since: our record is not what covers anything any more.
      lease.written = undefined;
      lease.endToWrite = end;
    }
    if (lease.endToWrite === undefined) return 'done';
    const current = await store.read(namespace, name);
    if (current === undefined) return 'done';
    const reaches = Date.parse(current.runningUntil);
    if (reaches >= end) {
      // Another replica's exec runs (or its end is coming): look again at the next turn. Else an
      // end at or after ours, or a horizon past it, already says as much as ours would.
      const runningElsewhere = reaches > now && current.runningUntil !== current.lastExecAt;
      if (runningElsewhere) return this.intervalMs;
      lease.endToWrite = undefined;
      return 'done';
    }
    // An end, or a lapsed record, earlier than ours: nothing runs (it would have renewed).
    if ((await store.write(namespace, name, endRecord, current)) === 'written') {
      lease.endToWrite = undefined;
      return 'done';
    }
    return RETRY_MS;
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
