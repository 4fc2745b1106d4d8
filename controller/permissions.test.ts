import { describe, expect, it } from 'vitest';
import { controllerPermissions } from './permissions.js';

describe('controllerPermissions', () => {
  it('asks about requests, Events and holder sessions where it watches, Leases in every namespace, the rest where it is', () => {
    const scoped = controllerPermissions({
      systemNamespace: 'simlock-system',
      watchNamespace: 'mobile-ci',
      leaderElection: true,
    });
    const where = (resource: string, group: string) => [
      ...new Set(
        scoped
          .filter((p) => p.resource === resource && p.group === group)
          .map((p) => p.namespace ?? '*'),
      ),
    ];
    expect(where('leaserequests', 'simlock.dev')).toEqual(['mobile-ci']);
    // Leases live in their workers' namespaces (ADR 0034), and so do the namespaces it makes.
    expect(where('leases', 'simlock.dev')).toEqual(['*']);
    expect(where('namespaces', '')).toEqual(['*']);
    expect(where('events', '')).toEqual(['mobile-ci']);
    expect(where('workers', 'simlock.dev')).toEqual(['*']);
    expect(where('leases', 'coordination.k8s.io').sort()).toEqual(['mobile-ci', 'simlock-system']);
    // Every request in every namespace when it watches them all.
    const all = controllerPermissions({ systemNamespace: 'simlock-system', leaderElection: true });
    expect(
      all.filter((p) => p.group === 'simlock.dev').every((p) => p.namespace === undefined),
    ).toBe(true);
  });

  it('asks about the leader-election Lease only with leader election, and by name where it can', () => {
    const election = (leaderElection: boolean) =>
      controllerPermissions({ systemNamespace: 's', leaderElection })
        .filter((p) => p.why === 'leader election')
        .map((p) => `${p.verb} ${p.name ?? ''}`.trim());
    expect(election(true)).toEqual([
      'create',
      'get simlock-controller',
      'update simlock-controller',
    ]);
    expect(election(false)).toEqual([]);
  });

  it('asks about the usage ConfigMap in the system namespace, by name where it can, unless it publishes none', () => {
    const usage = (publishUsage?: boolean) =>
      controllerPermissions({ systemNamespace: 's', leaderElection: false, publishUsage })
        .filter((p) => p.resource === 'configmaps')
        .map((p) => `${p.verb} ${p.namespace ?? ''} ${p.name ?? ''}`.trim());
    expect(usage()).toEqual(['create s', 'get s simlock-usage', 'update s simlock-usage']);
    expect(usage(false)).toEqual([]);
  });

  it('asks each question once', () => {
    const asked = controllerPermissions({ systemNamespace: 's', leaderElection: true }).map((p) =>
      JSON.stringify({ ...p, why: undefined }),
    );
    expect(new Set(asked).size).toBe(asked.length);
  });
});
