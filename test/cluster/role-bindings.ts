// The RBAC a test makes for its people, as an operator would with `kubectl create role` and
// `kubectl create rolebinding`: rules in a namespace or cluster-wide, and roles bound to users
// (client-certificate identities) or ServiceAccounts.
import type { KubeClient } from '../../runtime/index.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const GROUP = 'rbac.authorization.k8s.io';

export interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Who a binding names: a user by name, or a ServiceAccount of a namespace. */
export type Subject =
  { kind: 'User'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

/** A Role in `namespace`, or a ClusterRole without one, allowing `rules`. */
export async function createRole(
  admin: KubeClient,
  role: { name: string; namespace?: string; rules: Rule[] },
): Promise<void> {
  const { name, namespace, rules } = role;
  await admin.create(namespace ? `${RBAC}/namespaces/${namespace}/roles` : `${RBAC}/clusterroles`, {
    apiVersion: `${GROUP}/v1`,
    kind: namespace ? 'Role' : 'ClusterRole',
    metadata: { name },
    rules,
  });
}

/**
 * A RoleBinding in `namespace`, or a ClusterRoleBinding without one, of `role` (a ClusterRole
 * unless `roleKind` says Role) to `subjects`.
 */
export async function bindRole(
  admin: KubeClient,
  binding: {
    name: string;
    namespace?: string;
    role: string;
    roleKind?: 'Role' | 'ClusterRole';
    subjects: Subject[];
  },
): Promise<void> {
  const { name, namespace, role, roleKind = 'ClusterRole', subjects } = binding;
  const path = namespace
    ? `${RBAC}/namespaces/${namespace}/rolebindings`
    : `${RBAC}/clusterrolebindings`;
  await admin.create(path, {
    apiVersion: `${GROUP}/v1`,
    kind: namespace ? 'RoleBinding' : 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: GROUP, kind: roleKind, name: role },
    subjects: subjects.map((subject) =>
      subject.kind === 'User' ? { apiGroup: GROUP, ...subject } : subject,
    ),
  });
}

/**
 * What an operator grants a caller of the exec proxy (and the proxy itself): `create leases/exec`
 * in `namespace`, through its Role `lease-exec` (made here, once a namespace) bound to the
 * ServiceAccount by `binding`.
 */
export async function allowLeaseExec(
  admin: KubeClient,
  grant: { namespace: string; serviceAccount: string; binding: string },
): Promise<void> {
  const { namespace, serviceAccount, binding } = grant;
  await createRole(admin, {
    name: 'lease-exec',
    namespace,
    rules: [{ apiGroups: ['simlock.dev'], resources: ['leases/exec'], verbs: ['create'] }],
  });
  await bindRole(admin, {
    name: binding,
    namespace,
    role: 'lease-exec',
    roleKind: 'Role',
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
  });
}
