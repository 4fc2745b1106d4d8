// Since when a Worker is drained, as well as the API server can tell: the Worker keeps no drain
// time of its own, but the API server records, per field manager, when it last changed the fields
// it owns (metadata.managedFields). The manager that owns `spec.drained` set it at that time or
// before, so the drain is at least that old: the Attention page never calls a drain long early.
interface ManagedFieldsEntry {
  time?: unknown;
  fieldsV1?: unknown;
}

function ownsDrained(fields: unknown): boolean {
  const spec = (fields as { 'f:spec'?: unknown } | undefined)?.['f:spec'];
  return typeof spec === 'object' && spec !== null && 'f:drained' in spec;
}

/** The latest time a manager owning `spec.drained` wrote; undefined when none says. */
export function drainedSince(metadata: Record<string, unknown>): string | undefined {
  const entries = Array.isArray(metadata['managedFields'])
    ? (metadata['managedFields'] as ManagedFieldsEntry[])
    : [];
  let latest: string | undefined;
  for (const entry of entries) {
    if (typeof entry.time !== 'string' || !ownsDrained(entry.fieldsV1)) continue;
    if (Number.isNaN(Date.parse(entry.time))) continue;
    if (latest === undefined || Date.parse(entry.time) > Date.parse(latest)) latest = entry.time;
  }
  return latest;
}
