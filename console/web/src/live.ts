// The page's view of the fleet: one event stream from the console server (never the API server),
// every message parsed with the wire schemas before it is believed. Pages read it with
// useLive(); a change re-renders them at most once per animation frame.
import { useSyncExternalStore } from 'react';
import {
  ChangesMessage,
  SnapshotMessage,
  objectKeyOf,
  type Abilities,
  type AttentionSettings,
  type EventRow,
  type Feed,
  type LeaseView,
  type RequestDetail,
  type RequestView,
  type WorkerView,
} from '../../model/wire.js';
import type { StreamState } from '../../model/views.js';
import { post } from './api.js';

export interface LiveState {
  /** The event stream to the console; whether the page is live depends on `feed` too. */
  stream: StreamState;
  abilities: Abilities | undefined;
  /** The console's watches of the cluster, and what it does not watch. */
  feed: Feed | undefined;
  workers: ReadonlyMap<string, WorkerView>;
  requests: ReadonlyMap<string, RequestView>;
  leases: ReadonlyMap<string, LeaseView>;
  details: ReadonlyMap<string, RequestDetail>;
  /** Every Event this person may read, by its key; only while a page shows them (showEvents). */
  events: ReadonlyMap<string, EventRow>;
  /** The Attention page's thresholds, from the console. */
  attention: AttentionSettings | undefined;
}

class LiveStore {
  private state: LiveState = {
    stream: 'connecting',
    abilities: undefined,
    feed: undefined,
    workers: new Map(),
    requests: new Map(),
    leases: new Map(),
    details: new Map(),
    events: new Map(),
    attention: undefined,
  };
  private readonly listeners = new Set<() => void>();
  private source: EventSource | undefined;
  private stream: string | undefined;
  private focusKeys: string[] = [];
  private eventsShown = 0;
  private frame: number | undefined;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    this.open();
    return () => this.listeners.delete(listener);
  };

  snapshot = (): LiveState => this.state;

  /** The requests whose reasons and Events this page shows. */
  focus(keys: string[]): void {
    const sorted = [...new Set(keys)].sort();
    if (sorted.join('\n') === this.focusKeys.join('\n')) return;
    this.focusKeys = sorted;
    this.sendFocus();
  }

  /** A page that shows every Event: the console sends them while one is open. */
  showEvents(): () => void {
    this.eventsShown += 1;
    if (this.eventsShown === 1) this.sendFocus();
    return () => {
      this.eventsShown -= 1;
      if (this.eventsShown === 0) {
        this.state = { ...this.state, events: new Map() };
        this.sendFocus();
      }
    };
  }

  private sendFocus(): void {
    if (this.stream === undefined) return;
    post(`/api/stream/${this.stream}/focus`, {
      requests: this.focusKeys,
      events: this.eventsShown > 0,
    }).catch(() => undefined);
  }

  private open(): void {
    if (this.source) return;
    const source = new EventSource('/api/stream');
    this.source = source;
    source.addEventListener('snapshot', (event) => {
      const message = SnapshotMessage.safeParse(JSON.parse((event as MessageEvent<string>).data));
      if (!message.success) return;
      const { data } = message;
      this.stream = data.stream;
      this.state = {
        stream: 'open',
        abilities: data.abilities,
        feed: data.feed,
        workers: new Map(data.workers.map((worker) => [worker.name, worker])),
        requests: new Map(data.requests.map((request) => [objectKeyOf(request), request])),
        leases: new Map(data.leases.map((lease) => [objectKeyOf(lease), lease])),
        details: new Map(),
        // A new stream starts without Events: they come again once it knows this page shows them.
        events: new Map(),
        attention: data.attention,
      };
      this.sendFocus();
      this.changed();
    });
    source.addEventListener('changes', (event) => {
      const message = ChangesMessage.safeParse(JSON.parse((event as MessageEvent<string>).data));
      if (message.success) this.apply(message.data);
    });
    source.addEventListener('error', () => {
      // EventSource reconnects by itself; the page says so meanwhile. A stream refused (the
      // session ended) sends the person back to the login.
      this.state = { ...this.state, stream: 'reconnecting' };
      this.changed();
      if (source.readyState === EventSource.CLOSED) {
        this.source = undefined;
        window.location.assign('/');
      }
    });
  }

  private apply(message: ChangesMessage): void {
    const workers = new Map(this.state.workers);
    const requests = new Map(this.state.requests);
    const leases = new Map(this.state.leases);
    const details = new Map(this.state.details);
    const events = message.eventsReset ? new Map<string, EventRow>() : new Map(this.state.events);
    for (const row of message.events) events.set(row.key, row);
    for (const key of message.eventsGone) events.delete(key);
    for (const worker of message.workers) workers.set(worker.name, worker);
    for (const request of message.requests) requests.set(objectKeyOf(request), request);
    for (const lease of message.leases) leases.set(objectKeyOf(lease), lease);
    for (const detail of message.details) details.set(objectKeyOf(detail), detail);
    for (const { kind, key } of message.gone) {
      if (kind === 'worker') workers.delete(key);
      else if (kind === 'request') {
        requests.delete(key);
        details.delete(key);
      } else leases.delete(key);
    }
    this.state = {
      stream: 'open',
      abilities: message.abilities ?? this.state.abilities,
      feed: message.feed ?? this.state.feed,
      workers,
      requests,
      leases,
      details,
      events,
      attention: this.state.attention,
    };
    this.changed();
  }

  private changed(): void {
    if (this.frame !== undefined) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = undefined;
      for (const listener of this.listeners) listener();
    });
  }
}

export const live = new LiveStore();

export function useLive(): LiveState {
  return useSyncExternalStore(live.subscribe, live.snapshot);
}
