// Writes as the API server counts them (apiserver_request_total on its /metrics), by verb and
// resource: the figure every benchmark's cost per item is measured in.
import type { KubeClient } from '../../runtime/index.js';
import { samplesOf } from './prometheus-text.js';

/** Writes by "VERB group/resource[/subresource]", from apiserver_request_total; refused ones apart. */
export type WriteCounts = Record<string, number>;

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

/** The API server's running count of writes (GET /metrics; admin may read it). */
export async function apiserverWrites(admin: KubeClient): Promise<WriteCounts> {
  const text = String(await admin.get('/metrics'));
  const counts: WriteCounts = {};
  for (const { labels, value } of samplesOf(text, 'apiserver_request_total')) {
    if (!WRITE_VERBS.has(labels.verb ?? '')) continue;
    const resource = `${labels.group ? `${labels.group}/` : ''}${labels.resource ?? ''}${labels.subresource ? `/${labels.subresource}` : ''}`;
    // A refused write (a 409 of a conditional update) costs the API server too: counted, apart.
    const refused = labels.code !== undefined && !labels.code.startsWith('2');
    const key = `${labels.verb} ${resource}${refused ? ` ${labels.code}` : ''}`;
    counts[key] = (counts[key] ?? 0) + value;
  }
  return counts;
}

/** after − before, leaving out what did not change. */
export function writesBetween(before: WriteCounts, after: WriteCounts): WriteCounts {
  const delta: WriteCounts = {};
  for (const [key, value] of Object.entries(after)) {
    const change = value - (before[key] ?? 0);
    if (change > 0) delta[key] = change;
  }
  return delta;
}

export function totalWrites(counts: WriteCounts, keep: (key: string) => boolean = () => true) {
  return Object.entries(counts)
    .filter(([key]) => keep(key))
    .reduce((sum, [, value]) => sum + value, 0);
}
