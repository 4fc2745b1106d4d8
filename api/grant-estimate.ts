// The estimate of when a waiting request is granted, and how it was made: written by the
// controller while the request waits, read by the CLI, the client, MCP and the console.
import { z } from 'zod';
import { formatDuration } from './duration.js';
import { timestamp } from './schema-parts.js';

export const GrantEstimate = z.object({
  grantAt: timestamp
    .optional()
    .describe('When it should be granted; absent when there is no basis for an estimate.'),
  basis: z
    .string()
    .max(512)
    .describe(
      'How the estimate was made ("2 leases of iPhone 16 end before; 1 ahead of you"), or "no basis: …".',
    ),
});
export type GrantEstimate = z.infer<typeof GrantEstimate>;

/** "about 3m (2 leases of iPhone 16 end before)", or "no estimate: <why>". */
export function grantEstimateText(estimate: GrantEstimate, now: number): string {
  if (estimate.grantAt === undefined)
    return `no estimate: ${estimate.basis.replace(/^no basis: /, '')}`;
  const left = Math.max(0, Math.round((Date.parse(estimate.grantAt) - now) / 1000));
  const when = left === 0 ? 'any moment' : `about ${roughly(left)}`;
  return `${when} (${estimate.basis})`;
}

/** Whole minutes beyond two, whole seconds below: an estimate is no more precise than that. */
function roughly(seconds: number): string {
  return formatDuration(seconds >= 120 ? Math.round(seconds / 60) * 60 : seconds);
}
