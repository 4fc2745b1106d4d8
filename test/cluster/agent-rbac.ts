// RBAC for agent identities in cluster tests: the chart's agent rules (charts/simlock/templates/
// rbac-agent.yaml) as one ClusterRole bound to a ServiceAccount, and the tunnel verb on one Worker.
import type { KubeClient } from '../../runtime/index.js';

/**
 * A ClusterRole (named after the namespace, as cluster-scoped test objects are) and its binding;
 * their paths are added to `clusterScoped`, for the test to delete.
 */
export async function grant(
  admin: KubeClient,
  clusterScoped: string[],
  name: string,
  rules: object[],
  serviceAccount: { name: string; namespace: string },
): Promise<void> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  await admin.create(`${rbac}/clusterroles`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules,
  });
  await admin.create(`${rbac}/clusterrolebindings`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', ...serviceAccount }],
  });
  clusterScoped.push(`${rbac}/clusterroles/${name}`, `${rbac}/clusterrolebindings/${name}`);
}

/** The chart's agent ClusterRole (charts/simlock/templates/rbac-agent.yaml), heartbeats too. */
export const AGENT_RULES = [
  {
    apiGroups: ['simlock.dev'],
    resources: ['workers', 'workers/status'],
    verbs: ['get', 'create', 'update', 'patch', 'list', 'watch'],
  },
  {
    apiGroups: ['simlock.dev'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'patch', 'update'],
  },
  { apiGroups: ['simlock.dev'], resources: ['leases/status'], verbs: ['get', 'patch', 'update'] },
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'create', 'update', 'patch'],
  },
];

/** The tunnel verb on one Worker: what the chart grants each agent identity for its own. */
export function tunnelRule(worker: string): object {
  return {
    apiGroups: ['simlock.dev'],
    resources: ['workers/tunnel'],
    verbs: ['create'],
    resourceNames: [worker],
  };
}
