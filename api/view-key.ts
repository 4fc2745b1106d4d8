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
