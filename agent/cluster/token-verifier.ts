// The agent's check of who calls its exec endpoint: a bearer token reviewed by the API server
// (TokenReview), whose user must be one of the allowed identities (the exec proxy's service
// account). ADR 0003 says why this and not mutual TLS.
import { z } from 'zod';
import type { KubeClient } from '../../runtime/index.js';

const Answer = z.object({
  status: z
    .object({
      authenticated: z.boolean().optional(),
      user: z.object({ username: z.string().max(1024).optional() }).optional(),
    })
    .optional(),
});

export type TokenVerifier = (token: string) => Promise<string | undefined>;

/** Answers the caller's user name when it is allowed, else undefined. Caches answers briefly. */
export function tokenReviewVerifier(
  client: KubeClient,
  allowed: readonly string[],
  cacheMs = 10_000,
  now = () => Date.now(),
): TokenVerifier {
  const cache = new Map<string, { user: string | undefined; until: number }>();
  return async (token) => {
    const hit = cache.get(token);
    if (hit && hit.until > now()) return hit.user;
    const answer = Answer.safeParse(
      await client.create('/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      }),
    );
    const status = answer.success ? answer.data.status : undefined;
    const username = status?.authenticated === true ? status.user?.username : undefined;
    const user = username !== undefined && allowed.includes(username) ? username : undefined;
    if (cache.size > 1000) cache.clear();
    cache.set(token, { user, until: now() + cacheMs });
    return user;
  };
}
