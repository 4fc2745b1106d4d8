// Worker views are built from claims off the wire (the agent's status, the heartbeat Lease):
// whatever they hold, building a view never throws, and a value outside the contract is ignored
// as the contract says: a status that does not parse reads as not read yet (not-ready), a heartbeat
// without a usable renewal reads as none (disconnected), drained only when it is true.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROTOCOL, WorkerStatus, viewKey } from '../api/index.js';
import { iosCapacity, iosStatus, iphoneSimulator } from '../test/fixtures/workers.js';
import { buildWorker, parseHeartbeat, revisionKey, ViewRevisions } from './views.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

/** A status the contract accepts, to mutate from: a capability, one slot taken, one simulator. */
const validStatus = iosStatus({
  capabilities: [{ name: 'camera', available: true }],
  capacity: iosCapacity({ running: 1, evictable: 1 }, { running: 1, evictable: 1 }),
  devices: [iphoneSimulator('sim-1')],
});

/** Anything JSON can carry, and some things it cannot. */
const anyValue = fc.oneof(
  fc.jsonValue(),
  fc.anything(),
  fc.constantFrom(undefined, null, Number.NaN, Number.POSITIVE_INFINITY, -1, 1e308, '', []),
);

/** The valid status with one field (at any depth) replaced by anything. */
const mutatedStatus = fc
  .tuple(
    fc.constantFrom(
      ['protocol'],
      ['health'],
      ['agentVersion'],
      ['capabilities'],
      ['catalog'],
      ['catalog', 'platforms'],
      ['catalog', 'models'],
      ['capacity'],
      ['capacity', 'global'],
      ['capacity', 'global', 'limit'],
      ['capacity', 'platforms', 'ios'],
      ['capacity', 'platforms', 'ios', 'running'],
      ['queueDepth'],
      ['queue'],
      ['devices'],
      ['devices', '0'],
      ['devices', '0', 'state'],
      ['devices', '0', 'presence'],
      ['devices', '0', 'id'],
      ['endpoint'],
    ),
    anyValue,
  )
  .map(([path, value]) => {
    const status = structuredClone(validStatus) as Record<string, unknown>;
    let node = status;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
    node[path.at(-1) as string] = value;
    return status;
  });

const heartbeat = { renewTime: NOW - 1000, leaseDurationSeconds: 40 };

describe('buildWorker, fuzzed', () => {
  it('never throws, and keeps a status only when the contract accepts it', () => {
    fc.assert(
      fc.property(fc.oneof(anyValue, mutatedStatus), anyValue, (status, spec) => {
        const worker = buildWorker({ metadata: { name: 'wrk-a' }, spec, status }, heartbeat, NOW);
        const parsed = WorkerStatus.safeParse(status);
        expect(worker.view.status).toEqual(parsed.success ? parsed.data : undefined);
        expect(worker.key).toBe(viewKey(worker.view.status));
        // Drained only when the operator said exactly true; a label only when it is a text.
        const drained = (spec as { drained?: unknown } | null)?.drained === true;
        expect(worker.view.drained).toBe(
          spec !== null && typeof spec === 'object' ? drained : false,
        );
        expect(['connected', 'incompatible']).toContain(worker.view.connection);
        if (worker.label !== undefined) expect(typeof worker.label).toBe('string');
      }),
      { numRuns: 1000 },
    );
  });

  it('calls a worker with a protocol outside the range incompatible, never a crash', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), (protocol) => {
        const worker = buildWorker(
          { metadata: { name: 'wrk-a' }, status: { ...validStatus, protocol } },
          heartbeat,
          NOW,
        );
        const inRange = protocol >= PROTOCOL.min && protocol <= PROTOCOL.max;
        expect(worker.view.connection).toBe(inRange ? 'connected' : 'incompatible');
      }),
    );
  });
});

describe('parseHeartbeat, fuzzed', () => {
  it('never throws; answers a finite renewal and a duration of at most an hour, or nothing', () => {
    const spec = fc.record(
      {
        renewTime: fc.oneof(
          anyValue,
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
        ),
        leaseDurationSeconds: anyValue,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(anyValue, fc.record({ spec })), (lease) => {
        const parsed = parseHeartbeat(lease);
        if (parsed === undefined) return;
        expect(Number.isFinite(parsed.renewTime)).toBe(true);
        expect(parsed.leaseDurationSeconds).toBeGreaterThan(0);
        expect(parsed.leaseDurationSeconds).toBeLessThanOrEqual(3600);
      }),
      { numRuns: 1000 },
    );
  });

  it('a heartbeat that parses to nothing leaves the worker disconnected', () => {
    fc.assert(
      fc.property(anyValue, (lease) => {
        const parsed = parseHeartbeat(lease);
        const worker = buildWorker(
          { metadata: { name: 'wrk-a' }, status: validStatus },
          parsed,
          NOW,
        );
        if (parsed === undefined) expect(worker.view.connection).toBe('disconnected');
      }),
    );
  });
});

describe('a view revision', () => {
  const worker = { metadata: { name: 'a' }, spec: {}, status: validStatus };
  const fresh = { renewTime: NOW - 1000, leaseDurationSeconds: 30 };
  const lapsed = { renewTime: NOW - 60_000, leaseDurationSeconds: 30 };

  it('moves when the worker goes away and again when it comes back with the same status', () => {
    const revisions = new ViewRevisions();
    const before = revisions.observe('a', revisionKey(buildWorker(worker, fresh, NOW)));
    const away = revisions.observe('a', revisionKey(buildWorker(worker, lapsed, NOW)));
    const back = revisions.observe('a', revisionKey(buildWorker(worker, fresh, NOW)));
    expect(new Set([before, away, back]).size).toBe(3);
  });

  it('stays while nothing routing reads changes (a heartbeat renewed)', () => {
    const revisions = new ViewRevisions();
    const first = revisions.observe('a', revisionKey(buildWorker(worker, fresh, NOW)));
    const renewed = { renewTime: NOW, leaseDurationSeconds: 30 };
    expect(revisions.observe('a', revisionKey(buildWorker(worker, renewed, NOW)))).toBe(first);
  });
});
