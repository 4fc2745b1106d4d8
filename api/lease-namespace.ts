// Where a worker's Leases live: a namespace of its own, so that its agent's watch is one the API
// server indexes (its watchers are kept by namespace) instead of a selector matched against every
// Lease event (ADR 0034). One pure rule that the controller, the agent and the chart all compute.

/** The prefix of every worker's Lease namespace. */
export const LEASE_NAMESPACE_PREFIX = 'simlock-w-';
/** Label on a Lease naming its request's namespace (the Lease is named by the request's UID). */
export const REQUEST_NAMESPACE_LABEL = 'simlock.dev/request-namespace';

const MAX_LABEL = 63;
const HASH_DIGITS = 8;

/**
 * The namespace of `worker`'s Leases: `simlock-w-<worker>` when that is a DNS label (worker names
 * are DNS subdomains: they may hold dots and run to 253 characters); otherwise the name with its
 * dots made dashes, cut short, and eight hex digits of its hash, so that two workers never share one
 * unless a name is made to collide on purpose.
 */
export function leaseNamespaceOf(worker: string): string {
  const plain = LEASE_NAMESPACE_PREFIX + worker;
  if (plain.length <= MAX_LABEL && !worker.includes('.')) return plain;
  const room = MAX_LABEL - LEASE_NAMESPACE_PREFIX.length - HASH_DIGITS - 1;
  const stem = worker.replace(/\./g, '-').slice(0, room).replace(/-+$/, '');
  return `${LEASE_NAMESPACE_PREFIX}${stem}-${fnv1a(worker)}`;
}

/** FNV-1a, 32 bits, as eight hex digits: pure code, so that `api/` stays free of node:crypto. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(HASH_DIGITS, '0');
}
