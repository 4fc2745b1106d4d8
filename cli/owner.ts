// The pod that owns a request: --owner pod/NAME, or, when the plugin runs inside a pod (a CI job),
// that pod. Its ownerReference lets kube-controller-manager's garbage collector delete the request
// when the pod goes (or the Job that owns the pod), which releases the lease.
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { SimlockError } from '../api/index.js';
import { isNotFound, type KubeClient } from '../runtime/index.js';

const SERVICE_ACCOUNT_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

const Pod = z.object({
  metadata: z.object({ name: z.string().max(253), uid: z.string().max(64) }),
});

export interface OwnerReference {
  apiVersion: 'v1';
  kind: 'Pod';
  name: string;
  uid: string;
}

/** The pod this process runs in, when it runs in one in `namespace`; undefined otherwise. */
export function ownPod(
  namespace: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (env.KUBERNETES_SERVICE_HOST === undefined || env.HOSTNAME === undefined) return undefined;
  if (!existsSync(SERVICE_ACCOUNT_NAMESPACE)) return undefined;
  const podNamespace = readFileSync(SERVICE_ACCOUNT_NAMESPACE, 'utf8').trim();
  return podNamespace === namespace ? env.HOSTNAME : undefined;
}

/**
 * The ownerReference to pod `name` in `namespace`. Named with --owner, a pod that is not there is
 * an error; found by running in it, one that cannot be read is a warning and no owner.
 */
export async function podOwner(
  client: KubeClient,
  namespace: string,
  name: string,
  named: boolean,
  warn: (line: string) => void,
): Promise<OwnerReference | undefined> {
  try {
    const pod = Pod.parse(
      await client.get(
        `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`,
      ),
    );
    return { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid };
  } catch (error) {
    if (named) {
      if (isNotFound(error))
        throw new SimlockError(
          'NOT_FOUND',
          `--owner: pod "${name}" not found in namespace "${namespace}"`,
        );
      throw error;
    }
    warn(`the request is not owned by pod ${name} (${String(error)}): it outlives the pod`);
    return undefined;
  }
}
