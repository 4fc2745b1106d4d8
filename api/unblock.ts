// What would unblock a waiting request (issue 37): the kinds of change the search in
// api/routing/unblock.ts tries, cheapest first, their shapes and the texts people read. Asked on
// demand by the plugin (`kubectl simlock why`), MCP and the console; never stored (ADR 0026).
import { z } from 'zod';
import { formatDuration } from './duration.js';
import { PLATFORM_NAMES, Platform } from './reasons.js';
import { count, name, timestamp } from './schema-parts.js';

/**
 * The kinds of change, cheapest first: a lease that ends needs no one to act, an undrain is one
 * command, a runtime is an install on a host, a higher running limit may need a bigger host.
 */
export const UNBLOCK_KINDS = ['lease-ends', 'undrain', 'install-runtime', 'raise-limit'] as const;
export const UnblockKind = z.enum(UNBLOCK_KINDS);
export type UnblockKind = z.infer<typeof UnblockKind>;

/** At most this many changes are offered for one request. */
export const MAX_UNBLOCK_CHANGES = 3;

const RunningLimit = z.object({ running: count, limit: count });

export const UnblockChange = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('lease-ends'),
    worker: name,
    lease: z.object({ namespace: name, name }),
    endsAt: timestamp,
    platform: Platform,
    device: z.string().max(128).optional().describe('The leased device, when granted.'),
  }),
  z.object({ kind: z.literal('undrain'), worker: name }),
  z.object({
    kind: z.literal('install-runtime'),
    worker: name,
    platform: Platform,
    version: z.string().max(32),
  }),
  z.object({
    kind: z.literal('raise-limit'),
    worker: name,
    platform: Platform,
    /** The limits it is at, as its view reads; a limit one higher on each would let it run. */
    platformLimit: RunningLimit.optional(),
    globalLimit: RunningLimit.optional(),
  }),
]);
export type UnblockChange = z.infer<typeof UnblockChange>;

/** The search's answer: routable as the fleet stands, the changes that would help, or none. */
export const UnblockVerdict = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('routable'), worker: name }),
  z.object({
    kind: z.literal('changes'),
    changes: z.array(UnblockChange).min(1).max(MAX_UNBLOCK_CHANGES),
  }),
  z.object({ kind: z.literal('nothing-helps') }),
]);
export type UnblockVerdict = z.infer<typeof UnblockVerdict>;

/** What `why` answers about one request (`-o json`, MCP's `why_waiting`). */
export const WhyAnswer = z.object({
  namespace: name,
  name,
  phase: z.string().max(32),
  /** Absent when the request is not waiting: there is nothing to unblock. */
  verdict: UnblockVerdict.optional(),
  /** One line per change (or the verdict's one line), as the CLI prints them. */
  lines: z.array(z.string().max(512)).max(MAX_UNBLOCK_CHANGES + 1),
});
export type WhyAnswer = z.infer<typeof WhyAnswer>;

function limitText(limit: z.infer<typeof RunningLimit>): string {
  return `(${limit.running} of ${limit.limit})`;
}

/**
 * "undrain worker-b", "a lease on worker-a ends in 4m", …; `now` in ms. The lease is not named:
 * it may be someone else's (the structured answer carries it for those who may read it).
 */
export function unblockText(change: UnblockChange, now: number): string {
  switch (change.kind) {
    case 'lease-ends': {
      const left = Math.round((Date.parse(change.endsAt) - now) / 1000);
      const when = left <= 0 ? 'any moment' : `in ${formatDuration(left)}`;
      return `a lease on ${change.worker} ends ${when}`;
    }
    case 'undrain':
      return `undrain ${change.worker}`;
    case 'install-runtime':
      return `${change.worker} would serve it with ${PLATFORM_NAMES[change.platform]} ${change.version} installed`;
    case 'raise-limit': {
      const limits: string[] = [];
      if (change.platformLimit !== undefined) {
        const platform = PLATFORM_NAMES[change.platform];
        limits.push(`its ${platform} running limit ${limitText(change.platformLimit)}`);
      }
      if (change.globalLimit !== undefined) {
        limits.push(`its global running limit ${limitText(change.globalLimit)}`);
      }
      const higher = limits.length > 1 ? 'higher limits' : 'a higher limit';
      return `${change.worker} is at ${limits.join(' and ')}; ${higher} would let it run`;
    }
  }
}

/** The verdict as lines: one per change, else one saying it is routable or nothing helps. */
export function unblockLines(verdict: UnblockVerdict, now: number): string[] {
  switch (verdict.kind) {
    case 'routable':
      return [
        `nothing to change: ${verdict.worker} can take it now (the controller dispatches it when its turn comes)`,
      ];
    case 'changes':
      return verdict.changes.map((change) => unblockText(change, now));
    case 'nothing-helps':
      return [
        'nothing helps: no single change (an undrain, a runtime, a lease ending, a higher limit) would let it run',
      ];
  }
}
