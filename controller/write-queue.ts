// The controller's writes to the API server, by what matters: an outcome (a request's status that
// tells its user it is granted, dispatched, failed or released) and a dispatch (a Lease's create,
// withdrawal or delete) first, bookkeeping (finalizers, Events) next, then a waiting request whose
// reasons changed because a worker's presence did (disconnected, or back), and progress (the rest
// of a waiting request's reasons and its position) last. At most `concurrency` writes are in
// flight. When every lane has work, slots go to the lanes in the proportion 6 : 6 : 3 : 2 : 1, so
// a busy fleet still shows its waiting requests their reasons, only later; presence and progress
// writes also keep to a rate of their own, shared. Without the lanes, a burst of thousands of
// requests sent thousands of writes at once: the API server answered each in tens of seconds,
// dispatches timed out, and every timeout made more writes (a congestion collapse).
//
// Outcomes have a lane of their own so that a grant the agent made is told before the next
// dispatches are made (ADR 0036): in one lane, under a client rate limit, a walk's Lease creates
// (one per worker) queued ahead of the Granted statuses of the Leases already granted, and a
// thousand-worker fleet at QPS 50 showed a request Dispatched a median 105 s after its agent
// granted it, the lease's time running.
//
// Presence has a lane of its own because "worker X is disconnected" is news a user acts on (and
// the soak bounds it: the heartbeat plus a second), while a position that moved is not: in one
// lane with progress, it waited behind every position update of a busy fleet.
//
// A request's status write is keyed by the request (client-go's workqueue habit): scheduled again
// while it waits, it keeps one place (moved up if now more urgent); scheduled while in flight, it
// runs once more after. The write itself reads the request's latest state when its turn comes, so
// progress that waits here is coalesced, never lost.
import { TokenBucket, sleep, type Clock, type RateLimit } from '../runtime/index.js';

export type WritePriority = 'outcome' | 'dispatch' | 'bookkeeping' | 'presence' | 'progress';
/** Each lane's weight in the fair share, the lanes in their rank (first is served first). */
const WEIGHT: Readonly<Record<WritePriority, number>> = {
  outcome: 6,
  dispatch: 6,
  bookkeeping: 3,
  presence: 2,
  progress: 1,
};
const ORDER = Object.keys(WEIGHT) as readonly WritePriority[];
const RANK = perLane((lane) => ORDER.indexOf(lane));

/** A record of one value per lane. */
function perLane<T>(value: (lane: WritePriority) => T): Record<WritePriority, T> {
  return Object.fromEntries(ORDER.map((lane) => [lane, value(lane)])) as Record<WritePriority, T>;
}

/** The lanes that keep to the progress rate (a waiting request's status, all together). */
const RATED = new Set<WritePriority>(['presence', 'progress']);

export interface WriteQueueOptions {
  /** Writes in flight at once, all priorities together. */
  concurrency: number;
  /** Presence and progress writes per second (and burst); none: only the concurrency bounds them. */
  progressRate?: RateLimit | undefined;
  /** Milliseconds since some origin, for the progress rate (tests move it by hand). */
  now?: () => number;
  /** Waits some milliseconds (tests: a fake); on `clock` when not given. */
  wait?: (ms: number) => Promise<void>;
  /** The clock a progress write waits on for its token, when no `wait` is given. */
  clock?: Clock;
}

interface Task {
  key: string | undefined;
  priority: WritePriority;
  write: () => Promise<unknown>;
}

export class WriteQueue {
  private readonly lanes = new Map<WritePriority, Task[]>(ORDER.map((p) => [p, []]));
  /** Keyed tasks waiting, by key. */
  private readonly waitingByKey = new Map<string, Task>();
  /** Keys in flight, and what to run once more after, if scheduled meanwhile. */
  private readonly inFlightKeys = new Map<string, Task | undefined>();
  private running = 0;
  /** Writes started per lane (weighted fair share among the lanes that have work). */
  private readonly started = perLane(() => 0);
  private readonly progressTokens: TokenBucket | undefined;
  private readonly wait: (ms: number) => Promise<void>;
  /**
   * The rated lanes' token (presence and progress): such a write holds no slot while it waits for
   * its token, so a low rate never keeps a dispatch waiting. One token is waited for at a time.
   */
  private progressToken: 'none' | 'waiting' | 'ready' = 'none';

  constructor(private readonly options: WriteQueueOptions) {
    if (!(options.concurrency >= 1)) throw new Error('concurrency must be at least 1');
    this.progressTokens =
      options.progressRate && options.progressRate.qps > 0
        ? new TokenBucket(options.progressRate, options.now)
        : undefined;
    const clock = options.clock;
    this.wait = options.wait ?? (clock ? (ms) => sleep(clock, ms) : () => Promise.resolve());
    if (!options.wait && !clock && this.progressTokens)
      throw new Error('a progress rate needs a clock');
  }

  /** Writes waiting for their turn, by priority (for metrics and tests). */
  get depth(): Record<WritePriority, number> {
    return perLane((lane) => this.lanes.get(lane)?.length ?? 0);
  }

  get inFlight(): number {
    return this.running;
  }

  /** Runs a one-off write when its turn comes; answers what it answers. */
  run<T>(priority: WritePriority, write: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({
        key: undefined,
        priority,
        write: () => write().then(resolve, reject),
      });
    });
  }

  /**
   * Schedules the write of `key` (which handles its own failures). Already waiting: it keeps its
   * place, or moves to the more urgent lane, and the newer `write` is the one run. In flight: it
   * runs once more after, at the more urgent of the two priorities asked.
   */
  schedule(key: string, priority: WritePriority, write: () => Promise<unknown>): void {
    const waiting = this.waitingByKey.get(key);
    if (waiting) {
      waiting.write = write;
      if (RANK[priority] < RANK[waiting.priority]) {
        const lane = this.lanes.get(waiting.priority) ?? [];
        lane.splice(lane.indexOf(waiting), 1);
        waiting.priority = priority;
        this.lanes.get(priority)?.push(waiting);
        this.next();
      }
      return;
    }
    if (this.inFlightKeys.has(key)) {
      const again = this.inFlightKeys.get(key);
      this.inFlightKeys.set(key, {
        key,
        write,
        priority: again && RANK[again.priority] < RANK[priority] ? again.priority : priority,
      });
      return;
    }
    const task: Task = { key, priority, write };
    this.waitingByKey.set(key, task);
    this.enqueue(task);
  }

  private enqueue(task: Task): void {
    this.lanes.get(task.priority)?.push(task);
    this.next();
  }

  private start(task: Task): void {
    this.running++;
    this.started[task.priority]++;
    if (task.key !== undefined) {
      this.waitingByKey.delete(task.key);
      this.inFlightKeys.set(task.key, undefined);
    }
    void task
      .write()
      .catch(() => undefined)
      .finally(() => {
        this.running--;
        if (task.key !== undefined) {
          const again = this.inFlightKeys.get(task.key);
          this.inFlightKeys.delete(task.key);
          if (again) this.schedule(task.key, again.priority, again.write);
        }
        this.next();
      });
  }

  private next(): void {
    while (this.running < this.options.concurrency) {
      const ready = ORDER.filter(
        (candidate) =>
          (this.lanes.get(candidate)?.length ?? 0) > 0 &&
          !(RATED.has(candidate) && this.progressToken === 'waiting'),
      );
      if (ready.length === 0) return;
      // The lane that would be least ahead of its share after one more; ties go to the more
      // urgent lane (so a short burst runs in priority order).
      const share = (lane: WritePriority) => (this.started[lane] + 1) / WEIGHT[lane];
      const priority = ready.reduce((best, candidate) =>
        share(candidate) < share(best) ? candidate : best,
      );
      // A lane that was idle does not get to catch up on what it did not ask for.
      for (const lane of ORDER) {
        if (!ready.includes(lane))
          this.started[lane] = Math.max(
            this.started[lane],
            (this.started[priority] / WEIGHT[priority]) * WEIGHT[lane],
          );
      }
      if (RATED.has(priority) && this.progressTokens) {
        if (this.progressToken === 'ready') {
          this.progressToken = 'none';
        } else {
          const delay = this.progressTokens.reserve();
          if (delay > 0) {
            this.progressToken = 'waiting';
            void this.wait(delay).then(() => {
              this.progressToken = 'ready';
              this.next();
            });
            continue;
          }
        }
      }
      const task = this.lanes.get(priority)?.shift();
      if (!task) return;
      this.start(task);
    }
  }
}
