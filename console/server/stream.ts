// One open page's event stream: a snapshot of what this person may see, then batches of changes
// as the store hears of them (and of its watches' state: whether the page may say Live). Changes are coalesced by key (the latest state wins) and sent at
// most every `flushMs`; a slow browser is sent fewer, larger batches rather than a backlog.
// Reasons and Events come only for the requests the page says it looks at (focus).
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { answerWhyOf, type HeldLease } from '../../api/index.js';
import { startEventStream, writeWithBackpressure } from '../../runtime/index.js';
import type {
  Abilities,
  ChangesMessage,
  EventRow,
  Kind,
  RequestDetail,
  SnapshotMessage,
} from '../model/wire.js';
import type { Access } from './access.js';
import type { ConsoleStore, StoreChange } from './store.js';

const KEEPALIVE_MS = 15_000;
export const MAX_FOCUS = 50;

function namespaceOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

export class Subscriber {
  readonly id = randomBytes(12).toString('base64url');
  private focus = new Set<string>();
  private readonly pending = new Map<string, Kind>();
  private readonly pendingDetails = new Set<string>();
  /** The page shows every Event it may read (the Events page); all are sent when it starts. */
  private eventsOn = false;
  private eventsReset = false;
  private readonly pendingEvents = new Set<string>();
  private readonly namespaces = new Set<string>();
  private abilitiesChanged = false;
  private feedChanged = false;
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private writing = false;
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private keepalive: NodeJS.Timeout | undefined;
  private abilities: Abilities | undefined;

  constructor(
    private readonly store: ConsoleStore,
    private readonly access: Access,
    private readonly res: ServerResponse,
    private readonly flushMs = 40,
  ) {}

  async start(): Promise<void> {
    startEventStream(this.res);
    // Changes that come while the snapshot is made are queued behind it.
    this.unsubscribe = this.store.on((change) => {
      this.chain = this.chain.then(() => this.take(change));
    });
    let finishSnapshot: () => void = () => undefined;
    this.chain = new Promise<void>((resolve) => (finishSnapshot = resolve));
    this.res.on('close', () => this.close());
    try {
      const namespaces = [...this.store.namespaces()];
      for (const namespace of namespaces) this.namespaces.add(namespace);
      // A lease is its request's grant: shown to whoever may see the request.
      const [seeWorkers, requestsIn, abilities] = await Promise.all([
        this.access.seeWorkers(),
        this.visible(namespaces, (namespace) => this.access.seeRequests(namespace)),
        this.access.abilities(namespaces),
      ]);
      this.abilities = abilities;
      const snapshot: SnapshotMessage = {
        stream: this.id,
        abilities,
        feed: this.store.feed(),
        attention: this.store.attention,
        workers: seeWorkers ? [...this.store.workers.values()] : [],
        requests: [...this.store.requests.values()].filter((r) => requestsIn.has(r.namespace)),
        leases: [...this.store.leases.values()].filter((l) => requestsIn.has(l.namespace)),
      };
      await this.send('snapshot', snapshot);
    } finally {
      finishSnapshot();
    }
    this.keepalive = setInterval(() => void this.write(': keepalive\n\n'), KEEPALIVE_MS);
  }

  /** The requests whose reasons and Events the page shows now, and whether it shows all Events. */
  setFocus(keys: readonly string[], events = false): void {
    const next = new Set(keys.slice(0, MAX_FOCUS));
    for (const key of next) if (!this.focus.has(key)) this.pendingDetails.add(key);
    this.focus = next;
    if (events && !this.eventsOn) this.eventsReset = true;
    if (!events) this.pendingEvents.clear();
    this.eventsOn = events;
    this.schedule();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    clearInterval(this.keepalive);
    if (!this.res.writableEnded) this.res.end();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private async visible(
    namespaces: string[],
    check: (namespace: string) => Promise<boolean>,
  ): Promise<Set<string>> {
    const answers = await Promise.all(namespaces.map(check));
    return new Set(namespaces.filter((_, index) => answers[index]));
  }

  private async take(change: StoreChange): Promise<void> {
    if (this.closed) return;
    if (change.kind === 'feed') this.feedChanged = true;
    else if (change.kind === 'event') {
      if (this.eventsOn) this.pendingEvents.add(change.key);
    } else if (change.kind === 'worker') {
      if (await this.access.seeWorkers()) this.pending.set(`worker:${change.key}`, 'worker');
    } else {
      const namespace = namespaceOf(change.key);
      if (!this.namespaces.has(namespace)) {
        this.namespaces.add(namespace);
        this.abilitiesChanged = true;
      }
      if (change.kind === 'detail') {
        if (this.focus.has(change.key)) this.pendingDetails.add(change.key);
      } else {
        if (await this.access.seeRequests(namespace))
          this.pending.set(`${change.kind}:${change.key}`, change.kind);
        if (change.kind === 'request' && this.focus.has(change.key))
          this.pendingDetails.add(change.key);
      }
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.chain = this.chain.then(() => this.flush());
    }, this.flushMs);
  }

  private async flush(): Promise<void> {
    if (this.closed) return;
    if (this.writing) return this.schedule();
    const message: Omit<ChangesMessage, 'events' | 'eventsGone' | 'eventsReset'> = {
      workers: [],
      requests: [],
      leases: [],
      gone: [],
      details: [],
    };
    for (const [tagged, kind] of this.pending) {
      const key = tagged.slice(kind.length + 1);
      const current =
        kind === 'worker'
          ? this.store.workers.get(key)
          : kind === 'request'
            ? this.store.requests.get(key)
            : this.store.leases.get(key);
      if (current === undefined) message.gone.push({ kind, key });
      else if (kind === 'worker') message.workers.push(current as (typeof message.workers)[0]);
      else if (kind === 'request') message.requests.push(current as (typeof message.requests)[0]);
      else message.leases.push(current as (typeof message.leases)[0]);
    }
    this.pending.clear();
    for (const key of this.pendingDetails) {
      const detail = await this.detail(key);
      if (detail) message.details.push(detail);
    }
    this.pendingDetails.clear();
    const events = await this.events();
    const abilities = this.abilitiesChanged
      ? await this.access.abilities(this.namespaces)
      : undefined;
    this.abilitiesChanged = false;
    const changedAbilities =
      abilities && JSON.stringify(abilities) !== JSON.stringify(this.abilities);
    if (abilities) this.abilities = abilities;
    const empty =
      message.workers.length + message.requests.length + message.leases.length === 0 &&
      message.gone.length + message.details.length === 0 &&
      events.upserts.length + events.gone.length === 0 &&
      !events.reset;
    const feed = this.feedChanged ? this.store.feed() : undefined;
    this.feedChanged = false;
    if (empty && !changedAbilities && !feed) return;
    await this.send('changes', {
      ...message,
      events: events.upserts,
      eventsGone: events.gone,
      eventsReset: events.reset,
      ...(changedAbilities ? { abilities } : {}),
      ...(feed ? { feed } : {}),
    });
  }

  /** The Events to send: all of them once the page asks, then those that changed. */
  private async events(): Promise<{ upserts: EventRow[]; gone: string[]; reset: boolean }> {
    const reset = this.eventsReset && this.eventsOn;
    this.eventsReset = false;
    const keys = reset ? [...this.store.recentEvents.keys()] : [...this.pendingEvents];
    this.pendingEvents.clear();
    const upserts: EventRow[] = [];
    const gone: string[] = [];
    if (!this.eventsOn) return { upserts, gone, reset: false };
    const readable = new Map<string, Promise<boolean>>();
    for (const key of keys) {
      const namespace = namespaceOf(key);
      let may = readable.get(namespace);
      if (may === undefined) readable.set(namespace, (may = this.access.seeEvents(namespace)));
      if (!(await may)) continue;
      const row = this.store.recentEvents.get(key);
      if (row) upserts.push(row);
      else gone.push(key);
    }
    return { upserts, gone, reset };
  }

  private async detail(key: string): Promise<RequestDetail | undefined> {
    const request = this.store.requests.get(key);
    if (!request || !(await this.access.seeRequests(request.namespace))) return undefined;
    const eventsVisible = await this.access.seeEvents(request.namespace);
    const workers = this.store.reasons.get(key) ?? [];
    const unblock =
      request.phase === 'Waiting' && (await this.access.seeWorkers())
        ? await this.unblock(request, workers)
        : undefined;
    return {
      namespace: request.namespace,
      name: request.name,
      workers,
      events: eventsVisible ? this.store.eventsOf(key) : [],
      eventsVisible,
      ...(unblock !== undefined ? { unblock } : {}),
    };
  }

  /** What would unblock a waiting request, over the Workers and the leases this person may see. */
  private async unblock(
    request: NonNullable<ReturnType<ConsoleStore['requests']['get']>>,
    workers: RequestDetail['workers'],
  ): Promise<string[]> {
    const leases: HeldLease[] = [];
    const readable = new Map<string, Promise<boolean>>();
    for (const lease of this.store.leases.values()) {
      if (lease.phase !== 'Granted' || lease.deleting || lease.device === undefined) continue;
      let may = readable.get(lease.namespace);
      if (may === undefined) {
        readable.set(lease.namespace, (may = this.access.seeRequests(lease.namespace)));
      }
      if (!(await may)) continue;
      leases.push({
        namespace: lease.namespace,
        name: lease.name,
        worker: lease.worker,
        endsAt: lease.expiresAt,
        platform: lease.device.platform,
        device: lease.device.id,
      });
    }
    const answer = answerWhyOf(
      {
        metadata: { name: request.name, namespace: request.namespace },
        spec: request.spec,
        status: { phase: 'Waiting', workers },
      },
      [...this.store.workerObjects.values()],
      leases,
      Date.now(),
    );
    return answer.lines;
  }

  private async send(event: 'snapshot' | 'changes', data: unknown): Promise<void> {
    await this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private async write(frame: string): Promise<void> {
    if (this.closed || this.res.destroyed) return;
    this.writing = true;
    try {
      await writeWithBackpressure(this.res, frame);
    } finally {
      this.writing = false;
    }
  }
}
