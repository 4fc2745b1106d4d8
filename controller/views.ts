// Worker views: what routing reads about each worker, built from the Worker object (spec and the
// agent's status) and the worker's heartbeat Lease. A view is rebuilt, never mutated, when anything
// in it changes (routing remembers verdicts per view object).
import { PROTOCOL, WorkerStatus, viewKey, type WorkerObject } from '../api/index.js';
import type { Connection, WorkerView } from '../api/index.js';

export interface Heartbeat {
  renewTime: number;
  leaseDurationSeconds: number;
}

export interface KnownWorker {
  view: WorkerView;
  /** The view key (everything routing reads, presence included). */
  key: string;
  /**
   * When the heartbeat lapses, if it is fresh now (to re-evaluate then, without polling); Infinity
   * while a lapse is held for a silence of the API server (api-contact.ts).
   */
  lapsesAt?: number | undefined;
  label?: string | undefined;
  /** The agent's exec endpoint. */
  endpoint?: string | undefined;
}

/** Parses a heartbeat Lease's spec; undefined when it carries no usable renewal. */
export function parseHeartbeat(raw: unknown): Heartbeat | undefined {
  const spec = (
    raw as { spec?: { renewTime?: unknown; leaseDurationSeconds?: unknown } } | undefined
  )?.spec;
  if (!spec || typeof spec.renewTime !== 'string') return undefined;
  const renewTime = Date.parse(spec.renewTime);
  const duration = typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 40;
  if (!Number.isFinite(renewTime) || !Number.isFinite(duration) || duration <= 0) return undefined;
  return { renewTime, leaseDurationSeconds: Math.min(duration, 3600) };
}

/**
 * Builds one worker's view. The status is a claim from the agent: parsed against the contract;
 * a status that does not parse reads as not read yet (not-ready), never as a crash.
 */
export function buildWorker(
  worker: WorkerObject | { metadata: { name: string }; spec?: unknown; status?: unknown },
  heartbeat: Heartbeat | undefined,
  now: number,
  /** When a lapse due at `lapsesAt` is judged (api-contact.ts); as it falls due when not given. */
  judgeLapse: (lapsesAt: number, durationMs: number) => number = (lapsesAt) => lapsesAt,
): KnownWorker {
  const name = worker.metadata.name;
  const spec = (worker.spec ?? {}) as { drained?: unknown; label?: unknown };
  const drained = spec.drained === true;
  const label = typeof spec.label === 'string' && spec.label.length > 0 ? spec.label : undefined;
  const parsed = worker.status === undefined ? undefined : WorkerStatus.safeParse(worker.status);
  const status = parsed?.success ? parsed.data : undefined;

  const durationMs = (heartbeat?.leaseDurationSeconds ?? 0) * 1000;
  const lapsesAt = heartbeat ? judgeLapse(heartbeat.renewTime + durationMs, durationMs) : undefined;
  let connection: Connection =
    lapsesAt !== undefined && lapsesAt > now ? 'connected' : 'disconnected';
  if (
    connection === 'connected' &&
    status &&
    (status.protocol < PROTOCOL.min || status.protocol > PROTOCOL.max)
  ) {
    connection = 'incompatible';
  }
  const view: WorkerView = { name, connection, drained, status };
  return {
    view,
    key: viewKey(status),
    lapsesAt: connection === 'connected' ? lapsesAt : undefined,
    label,
    endpoint: status?.endpoint,
  };
}

/** Two views route alike when connection, drained and the view key are the same. */
export function sameRouting(a: KnownWorker | undefined, b: KnownWorker): boolean {
  return (
    a !== undefined &&
    a.view.connection === b.view.connection &&
    a.view.drained === b.view.drained &&
    a.key === b.key
  );
}

/**
 * What a worker's view revision follows: its connection and its view key. A worker that went away
 * and came back may not be the agent that was silent or refused (it restarted, or it was cut off
 * while a dispatch to it was withdrawn), so its return ends what was remembered against the view
 * before, as a change of its status does. Its status alone does not move when it comes back: an
 * agent cut off with two ready simulators comes back with the same two.
 */
export function revisionKey(worker: KnownWorker): string {
  return `${worker.view.connection} ${worker.key}`;
}

/**
 * Each worker's view revision: a number that moves whenever the worker's revision key
 * (`revisionKey`) changes and never returns to an earlier value, so "the same revision" means
 * "nothing changed since", which an equal key does not (a view may go A → B → A). Memos are held
 * against revisions (memos.ts).
 */
export class ViewRevisions {
  private last = 0;
  private readonly current = new Map<string, { key: string; revision: number }>();

  /** Records the worker's current view key and returns its revision. */
  observe(worker: string, key: string): number {
    const known = this.current.get(worker);
    if (known?.key === key) return known.revision;
    const revision = ++this.last;
    this.current.set(worker, { key, revision });
    return revision;
  }

  get(worker: string): number | undefined {
    return this.current.get(worker)?.revision;
  }

  /** A removed worker; if it comes back, its views start at a new revision. */
  forget(worker: string): void {
    this.current.delete(worker);
  }
}
