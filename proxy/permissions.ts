// Every permission the proxy needs, in one place: main.ts asks the API server about each at startup
// and refuses to start without one (runtime/permission-check.ts), and e2e/permissions.test.ts
// proves that the chart's ClusterRole (charts/simlock/templates/rbac-proxy.yaml) grants each, as
// the real authorizer answers. A new call of the proxy on the API server needs its line here.
import { GROUP, RESOURCES } from '../api/index.js';
import type { Permission } from '../runtime/index.js';

export function proxyPermissions(): Permission[] {
  return [
    {
      verb: 'create',
      group: 'authentication.k8s.io',
      resource: 'tokenreviews',
      why: 'who is calling',
    },
    {
      verb: 'create',
      group: 'authorization.k8s.io',
      resource: 'subjectaccessreviews',
      why: 'may the caller exec on the lease',
    },
    {
      verb: 'get',
      group: GROUP,
      resource: RESOURCES.lease.plural,
      why: "the request's Lease, in its worker's namespace: granted, and its agent",
    },
    { verb: 'get', group: GROUP, resource: RESOURCES.worker.plural, why: "the agent's endpoint" },
    {
      verb: 'get',
      group: GROUP,
      resource: RESOURCES.leaseRequest.plural,
      why: "where the lease's Lease is (its status), and why a lease ended under an exec (LEASE_LOST)",
    },
    {
      verb: 'patch',
      group: GROUP,
      resource: RESOURCES.lease.plural,
      subresource: 'status',
      why: 'exec activity, for idle reclaim',
    },
  ];
}
