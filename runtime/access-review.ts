// Who is behind a token and what they may do, asked of the API server: TokenReview,
// SubjectAccessReview (for another person, with the asker's credentials: the proxy and the
// console need create on both) and SelfSubjectAccessReview (for oneself). Also the bearer token a
// kubeconfig carries, and a client that speaks with a person's token.
import { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { KubeClient } from './kube-client.js';

export interface Caller {
  username: string;
  uid?: string | undefined;
  groups: string[];
  extra?: Record<string, string[]> | undefined;
}

/** What a SubjectAccessReview asks about (resourceAttributes). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
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

/** May `caller` do this? Asked with `client`'s credentials. */
export async function subjectMay(
  client: KubeClient,
  caller: Caller,
  attributes: ResourceAttributes,
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
        resourceAttributes: attributes,
      },
    }),
  );
  return answer.status?.allowed === true;
}

/** May the identity of `client` itself do this? */
export async function selfMay(
  client: KubeClient,
  attributes: ResourceAttributes,
): Promise<boolean> {
  const answer = AccessReviewAnswer.parse(
    await client.create('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: attributes },
    }),
  );
  return answer.status?.allowed === true;
}

export function bearerToken(header: string | undefined): string | undefined {
  const found = /^Bearer\s+(\S{1,16384})$/i.exec(header ?? '');
  return found?.[1];
}

/** The bearer token a kubeconfig gives (a static token, or one an exec plugin makes), if any. */
export async function kubeconfigBearerToken(client: KubeClient): Promise<string | undefined> {
  const options: { headers?: Record<string, string> } = {};
  await client.config.applyToHTTPSOptions(options);
  const header = options.headers?.Authorization ?? options.headers?.authorization;
  return typeof header === 'string' ? bearerToken(header) : undefined;
}

/** A client for the same API server as `base` that authenticates with `token` alone. */
export function clientWithToken(base: KubeClient, token: string): KubeClient {
  const cluster = base.config.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'person', token }],
    contexts: [{ name: 'person', cluster: cluster.name, user: 'person' }],
    currentContext: 'person',
  });
  return new KubeClient(config);
}
