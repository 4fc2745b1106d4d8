import { describe, expect, it } from 'vitest';
import { describePermission, refusalLines, type Permission } from './permission-check.js';

const list: Permission = {
  verb: 'list',
  group: 'simlock.dev',
  resource: 'leaserequests',
  why: 'the requests',
};
const renew: Permission = {
  verb: 'update',
  group: 'coordination.k8s.io',
  resource: 'leases',
  name: 'simlock-controller',
  namespace: 'simlock-system',
  why: 'leader election',
};

describe('describePermission', () => {
  it('says the verb, the resource and its group, the name and where, and what for', () => {
    expect(describePermission(list)).toBe(
      'list leaserequests in API group "simlock.dev" in all namespaces (the requests)',
    );
    expect(describePermission(renew)).toBe(
      'update leases named "simlock-controller" in API group "coordination.k8s.io" in namespace "simlock-system" (leader election)',
    );
    expect(
      describePermission({ verb: 'create', group: '', resource: 'events', why: 'Events' }),
    ).toBe('create events in the core API group in all namespaces (Events)');
    expect(
      describePermission({ ...list, verb: 'update', subresource: 'status', why: 'status' }),
    ).toBe('update leaserequests/status in API group "simlock.dev" in all namespaces (status)');
  });
});

describe('refusalLines', () => {
  it('has one line per missing permission, then how many of how many and for whom', () => {
    expect(
      refusalLines('simlock-controller', [list, renew], 20, 'system:serviceaccount:a:b'),
    ).toEqual([
      `simlock-controller: missing permission: ${describePermission(list)}`,
      `simlock-controller: missing permission: ${describePermission(renew)}`,
      "simlock-controller: 2 of 20 permissions missing for system:serviceaccount:a:b; grant them (the chart's roles do) and start it again",
    ]);
    expect(refusalLines('simlock-proxy', [list], 5, undefined).at(-1)).toBe(
      "simlock-proxy: 1 of 5 permissions missing; grant them (the chart's roles do) and start it again",
    );
  });
});
