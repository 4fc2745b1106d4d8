// The view key: everything routing reads from a worker's view, presence included, and nothing it
// does not (connection and drained live elsewhere). A refusal is remembered while the key holds;
// the agent patches its status only when the key (or anything else in the status) changes.
import type { WorkerStatus } from './schemas.js';

/** Canonical JSON: object keys sorted, so equal views give equal keys whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Whether two values have the same canonical JSON, found without building it: the first
 * difference ends the look. A waiting request's status holds a reason per worker, and comparing it
 * as text on every change of its position cost the controller more than its walks (a thousand
 * workers, thousands of requests).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let index = 0; index < a.length; index++) if (!sameJson(a[index], b[index])) return false;
    return true;
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const [left, right] = [a as Record<string, unknown>, b as Record<string, unknown>];
  // Members that are undefined are left out of JSON, so they count as absent.
  let members = 0;
  for (const [key, value] of Object.entries(left)) {
    if (value === undefined) continue;
    members++;
    if (!sameJson(value, right[key])) return false;
  }
  for (const value of Object.values(right)) if (value !== undefined) members--;
  return members === 0;
}

export function viewKey(status: WorkerStatus | undefined): string {
  if (status === undefined) return 'unread';
  return canonicalJson({
    protocol: status.protocol,
    health: status.health,
    capabilities: status.capabilities,
    catalog: status.catalog,
    capacity: status.capacity,
    queueDepth: status.queueDepth,
    physicalQueueDepth: status.physicalQueueDepth,
    devices: status.devices,
  });
}
