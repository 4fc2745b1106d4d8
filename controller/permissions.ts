// Every permission the controller needs, in one place: main.ts asks the API server about each at
// startup and refuses to start without one (runtime/permission-check.ts), and
// e2e/permissions.test.ts proves that the chart's roles grant each, as the real authorizer
// answers, so the list and charts/simlock/templates/rbac-controller.yaml cannot drift apart. A
// new call of the controller on the API server needs its line here (ADR 0015).
import { GROUP, RESOURCES, USAGE_CONFIGMAP } from '../api/index.js';
import type { Permission } from '../runtime/index.js';

export interface ControllerScope {
  /** Where the heartbeats and the leader-election Lease are (--namespace). */
  systemNamespace: string;
  /** Only requests of this namespace (--watch-namespace); all when absent. */
  watchNamespace?: string | undefined;
  leaderElection: boolean;
  /** The usage history is published (--usage-publish-interval not 0); true when absent. */
  publishUsage?: boolean;
}

/** The name of the leader-election Lease, in the system namespace. */
export const LEADER_LEASE_NAME = 'simlock-controller';

export function controllerPermissions(scope: ControllerScope): Permission[] {
  const requests = scope.watchNamespace !== undefined ? { namespace: scope.watchNamespace } : {};
  const system = { namespace: scope.systemNamespace };
  const simlock = (resource: string, verbs: string[], why: string, subresource?: string) =>
    verbs.map((verb): Permission => ({
      verb,
      group: GROUP,
      resource,
      ...(subresource ? { subresource } : {}),
      // Workers are cluster-wide; Leases live in their workers' namespaces (ADR 0034).
      ...(resource === RESOURCES.leaseRequest.plural ? requests : {}),
      why,
    }));
  const coordination = (verbs: string[], where: object, why: string, name?: string) =>
    verbs.map((verb): Permission => ({
      verb,
      group: 'coordination.k8s.io',
      resource: 'leases',
      ...where,
      ...(name ? { name } : {}),
      why,
    }));
  const usage = (verb: string, name?: string): Permission => ({
    verb,
    group: '',
    resource: 'configmaps',
    ...system,
    ...(name ? { name } : {}),
    why: 'the usage history for the console (ADR 0027)',
  });
  return [
    ...simlock(RESOURCES.worker.plural, ['list', 'watch'], 'the fleet'),
    ...simlock(RESOURCES.worker.plural, ['get'], "a Lease's worker, before letting go of it"),
    ...simlock(RESOURCES.leaseRequest.plural, ['list', 'watch'], 'the requests'),
    ...simlock(RESOURCES.leaseRequest.plural, ['patch'], 'the release finalizer'),
    ...simlock(RESOURCES.leaseRequest.plural, ['get'], 'a status write after a conflict'),
    ...simlock(RESOURCES.leaseRequest.plural, ['update'], 'request status', 'status'),
    ...simlock(
      RESOURCES.lease.plural,
      ['create', 'delete', 'get', 'list', 'watch', 'patch'],
      'the Leases it dispatches',
    ),
    {
      verb: 'create',
      group: '',
      resource: 'namespaces',
      why: "a worker's Lease namespace, at its first sight (ADR 0034)",
    },
    {
      verb: 'list',
      group: '',
      resource: 'namespaces',
      why: "the workers' Lease namespaces there already, once at start",
    },
    { verb: 'create', group: '', resource: 'events', ...requests, why: 'Events on requests' },
    ...coordination(['list', 'watch'], system, 'the agents’ heartbeats'),
    ...coordination(['list', 'watch'], requests, 'holder sessions'),
    ...(scope.publishUsage === false
      ? []
      : [usage('create'), usage('get', USAGE_CONFIGMAP), usage('update', USAGE_CONFIGMAP)]),
    ...(scope.leaderElection
      ? [
          ...coordination(['create'], system, 'leader election'),
          ...coordination(['get', 'update'], system, 'leader election', LEADER_LEASE_NAME),
        ]
      : []),
  ];
}
