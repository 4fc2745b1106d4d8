// People for the console's tests: ServiceAccounts with a token (token mode logs in with it; run
// locally, the console reads it from the kubeconfig) and the RBAC each is given.
import { isAlreadyExists, type KubeClient } from '../../runtime/index.js';
import { serviceAccountIdentity, type TestIdentity } from '../../test/cluster/identities.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

async function ensure(admin: KubeClient, path: string, body: unknown): Promise<void> {
  try {
    await admin.create(path, body);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/**
 * A ServiceAccount `name` in `home`, with `clusterRules` bound cluster-wide and `namespaceRules`
 * bound in each of `namespaces`.
 */
export async function person(
  admin: KubeClient,
  home: string,
  name: string,
  grants: { clusterRules?: Rule[]; namespaceRules?: Rule[]; namespaces?: string[] },
): Promise<TestIdentity & { token: string }> {
  const role = `${home}-${name}`;
  const subject = [{ kind: 'ServiceAccount', name, namespace: home }];
  if (grants.clusterRules) {
    await ensure(admin, `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: role },
      rules: grants.clusterRules,
    });
    await ensure(admin, `${RBAC}/clusterrolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: subject,
    });
  }
  for (const namespace of grants.namespaces ?? []) {
    await ensure(admin, `${RBAC}/namespaces/${namespace}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: role, namespace },
      rules: grants.namespaceRules ?? [],
    });
    await ensure(admin, `${RBAC}/namespaces/${namespace}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: role, namespace },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: role },
      subjects: subject,
    });
  }
  const identity = await serviceAccountIdentity(admin, home, name, { create: true });
  const token = identity.client.config.getCurrentUser()?.token ?? '';
  return { ...identity, token };
}

export const EVERYTHING: Rule[] = [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }];
