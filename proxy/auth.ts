// Who is calling, and may they exec on this lease: TokenReview, then SubjectAccessReview, asked of
// the API server with the proxy's own credentials (it needs create on both; see the chart's RBAC).
import { z } from 'zod';
import { GROUP, RESOURCES } from '../api/index.js';
import type { KubeClient } from '../runtime/index.js';

export interface Caller {
  username: string;
  uid?: string | undefined;
  groups: string[];
  extra?: Record<string, string[]> | undefined;
}

const TokenReviewAnswer = z.object({
  status: z
    .object({
      authenticated: z.boolean().optional(),
      user: z
        .object({
          username: z.string().max(1024).optional(),
          uid: z.string().max(1024).optional(),
          groups: z.array(z.string().max(1024)).max(256).optional(),
          extra: z.record(z.string(), z.array(z.string())).optional(),
        })
        .optional(),
      error: z.string().optional(),
    })
    .optional(),
});

const AccessReviewAnswer = z.object({
  status: z.object({ allowed: z.boolean(), reason: z.string().optional() }).optional(),
});

/** The caller behind a bearer token, or undefined when the API server does not accept it. */
export async function reviewToken(client: KubeClient, token: string): Promise<Caller | undefined> {
  const answer = TokenReviewAnswer.parse(
    await client.create('/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    }),
  );
  const user = answer.status?.user;
  if (answer.status?.authenticated !== true || !user?.username) return undefined;
  return { username: user.username, uid: user.uid, groups: user.groups ?? [], extra: user.extra };
}

/** May the caller `create leases/exec` on this lease in this namespace? */
export async function mayExec(
  client: KubeClient,
  caller: Caller,
  namespace: string,
  lease: string,
): Promise<boolean> {
  const answer = AccessReviewAnswer.parse(
    await client.create('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: caller.username,
        ...(caller.uid ? { uid: caller.uid } : {}),
        groups: caller.groups,
        ...(caller.extra ? { extra: caller.extra } : {}),
        resourceAttributes: {
          namespace,
          verb: 'create',
          group: GROUP,
          resource: RESOURCES.lease.plural,
          subresource: 'exec',
          name: lease,
        },
      },
    }),
  );
  return answer.status?.allowed === true;
}

export function bearerToken(header: string | undefined): string | undefined {
  const found = /^Bearer\s+(\S{1,16384})$/i.exec(header ?? '');
  return found?.[1];
}
