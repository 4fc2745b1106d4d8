// Whether the requests dispatched to a worker that was cut off went elsewhere: the soak's verdict.
import { describe, expect, it } from 'vitest';
import type { PartitionResult, SoakFaults } from './faults.js';
import { GRANT_IN_FLIGHT_MS, invariants, reroutes } from './figures.js';
import type { RequestRecord, SoakWatch } from './watch.js';

const CUT = Date.parse('2026-12-02T02:06:36Z');
const partition: PartitionResult = {
  worker: 'soak-00',
  cutAt: CUT,
  healedAt: CUT + 60_000,
  problems: [],
};

/** A request created `createdMs` from the cut, dispatched to soak-00 then, granted as given. */
function record(createdMs: number, granted?: { on: string; atMs: number }): RequestRecord {
  return {
    kind: 'iphone',
    createdAt: CUT + createdMs,
    ...(granted ? { grantedAt: CUT + granted.atMs, grantedOn: granted.on } : {}),
    outcomes: new Set(granted ? ['granted'] : []),
    leases: new Map([['uid-1', { worker: 'soak-00', seenAt: CUT + createdMs + 100, seen: [] }]]),
    grantedLeases: new Set(),
    deleted: false,
  };
}

describe('reroutes', () => {
  it('counts a request granted elsewhere in time as re-routed', () => {
    const [route] = reroutes(new Map([['r1', record(-2000, { on: 'soak-07', atMs: 13_000 })]]), [
      partition,
    ]);
    expect(route).toEqual({ worker: 'soak-00', reroutesMs: [13_000], grantedAsCut: [], stuck: [] });
  });

  it('takes a grant on the cut worker seen just after the cut as sent before it, not stuck', () => {
    const [route] = reroutes(
      new Map([['r1', record(-5000, { on: 'soak-00', atMs: GRANT_IN_FLIGHT_MS - 800 })]]),
      [partition],
    );
    expect(route?.grantedAsCut).toEqual(['r1']);
    expect(route?.stuck).toEqual([]);
  });

  it('calls stuck one granted on the cut worker later, or never granted', () => {
    const [route] = reroutes(
      new Map([
        ['late-grant', record(-1000, { on: 'soak-00', atMs: GRANT_IN_FLIGHT_MS + 500 })],
        ['never', record(1000)],
      ]),
      [partition],
    );
    expect(route?.grantedAsCut).toEqual([]);
    expect(route?.stuck).toHaveLength(2);
    expect(route?.stuck[0]).toMatch(
      /^late-grant \(created 02:06:35, granted soak-00 after 3500 ms\)$/,
    );
    expect(route?.stuck[1]).toMatch(/^never \(created 02:06:37, granted never after - ms\)$/);
  });
});

describe('invariants', () => {
  const verdict = (records: Map<string, RequestRecord>) => {
    const watch = { records, doubleGrants: [] } as unknown as SoakWatch;
    const faults = { partitions: [], convergence: [], errors: [] } as unknown as SoakFaults;
    return invariants(watch, faults, [], []).find((entry) =>
      entry.name.startsWith('every request'),
    );
  };
  const pinned = (flags: Partial<RequestRecord>): RequestRecord => ({
    ...record(0),
    kind: 'pinned',
    ...flags,
  });

  it('holds against the product a pinned request that never ended', () => {
    expect(verdict(new Map([['keep-0', pinned({})]]))?.examples).toEqual(['keep-0: no outcome']);
  });

  it('does not hold against the product a pinned request the harness withdrew or gave up', () => {
    const records = new Map([
      ['drop-0', pinned({ deleted: true })],
      ['keep-0', pinned({ abandoned: true })],
    ]);
    expect(verdict(records)?.violations).toBe(0);
  });
});
