// A ServiceAccount's token from the TokenRequest API, asked by an admin client: what the tests,
// the local fleet and the soak hand to the proxy and to people playing users. No vitest here, so
// that programs outside the test runner (npm run up, bench/) use it too.
import type { KubeClient } from '../../runtime/index.js';

export interface ServiceAccountTokenOptions {
  /** Create the ServiceAccount first (it must not exist yet). */
  create?: boolean;
  /** One hour unless said. */
  expirationSeconds?: number;
}

export async function serviceAccountToken(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  options: ServiceAccountTokenOptions = {},
): Promise<string> {
  const accounts = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts`;
  if (options.create) {
    await admin.create(accounts, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: serviceAccount, namespace },
    });
  }
  const answer = (await admin.create(`${accounts}/${encodeURIComponent(serviceAccount)}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: options.expirationSeconds ?? 3600 },
  })) as { status?: { token?: string } };
  const token = answer.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${namespace}/${serviceAccount}`);
  return token;
}
