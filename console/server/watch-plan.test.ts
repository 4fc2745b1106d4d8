import { describe, expect, it } from 'vitest';
import type { ResourceAttributes } from '../../runtime/index.js';
import { planWatches } from './watch-plan.js';

/** An authorizer's answers as rules "verb resource.group@namespace" ("*" for everywhere). */
function answers(...allowed: string[]) {
  return (attributes: ResourceAttributes) => {
    const resource = attributes.group
      ? `${attributes.resource}.${attributes.group}`
      : attributes.resource;
    const where = attributes.namespace ?? '*';
    return Promise.resolve(
      allowed.some((rule) => {
        const [verbs = '', what = '', namespace = '*'] = rule.split(/[ @]/);
        return (
          verbs.split(',').includes(attributes.verb) &&
          what === resource &&
          (namespace === '*' || namespace === where)
        );
      }),
    );
  };
}

const base = { fallbackNamespace: 'team-a', simlockNamespace: 'simlock-system', subject: 'You' };
const read = 'list,watch';

describe('planWatches', () => {
  it('watches everything everywhere for an identity that may, and hides nothing', async () => {
    const plan = await planWatches({
      ...base,
      may: answers(
        ...['workers.simlock.dev', 'leaserequests.simlock.dev', 'events'].map(
          (what) => `${read} ${what}`,
        ),
        `${read} leases.coordination.k8s.io@simlock-system`,
      ),
    });
    expect(plan).toEqual({
      workers: true,
      heartbeats: true,
      namespace: undefined,
      requests: true,
      events: true,
      hidden: [],
    });
  });

  it("falls back to the context's namespace for a user who may read only requests there, and says what is hidden and why", async () => {
    // No rule on Leases: the leases shown are their requests' grants (ADR 0034).
    const plan = await planWatches({
      ...base,
      may: answers(`create,delete,get,list,watch,patch leaserequests.simlock.dev@team-a`),
    });
    expect(plan).toMatchObject({ workers: false, heartbeats: false, namespace: 'team-a' });
    expect(plan).toMatchObject({ requests: true, events: false });
    expect(plan.hidden).toEqual([
      'You may not list workers.simlock.dev: the fleet is not shown.',
      'You may not list leaserequests.simlock.dev in all namespaces: only namespace team-a is shown.',
      "You may not list events in namespace team-a: requests' Events are not shown.",
    ]);
  });

  it('keeps to the namespace asked for, and names the verb refused', async () => {
    const plan = await planWatches({
      ...base,
      namespace: 'team-b',
      subject: "The console's identity",
      may: answers(
        `${read} workers.simlock.dev`,
        `list leaserequests.simlock.dev`,
        `${read} events`,
      ),
    });
    expect(plan).toMatchObject({ workers: true, heartbeats: false, namespace: 'team-b' });
    expect(plan.hidden).toEqual([
      'Only namespace team-b is shown, as asked.',
      "The console's identity may not watch leaserequests.simlock.dev in namespace team-b: requests and leases are not shown.",
      "The console's identity may not list leases.coordination.k8s.io in namespace simlock-system: workers' heartbeats are not shown.",
    ]);
  });

  it('opens a watch whose review failed: the watch itself will say what is wrong', async () => {
    const plan = await planWatches({
      ...base,
      may: () => Promise.reject(new Error('connect ECONNREFUSED')),
    });
    expect(plan).toMatchObject({ workers: true, namespace: undefined, requests: true });
    expect(plan.hidden).toEqual([]);
  });
});
