import { describe, expect, it } from 'vitest';
import { drainedSince } from './drained-since.js';

describe('since when a worker is drained', () => {
  it('is the latest write of a manager that owns spec.drained', () => {
    expect(
      drainedSince({
        managedFields: [
          { manager: 'agent', time: '2026-12-01T12:30:00Z', fieldsV1: { 'f:status': {} } },
          {
            manager: 'kubectl-simlock',
            time: '2026-12-01T11:00:00Z',
            fieldsV1: { 'f:spec': { 'f:drained': {} } },
          },
          {
            manager: 'console',
            time: '2026-12-01T10:00:00Z',
            fieldsV1: { 'f:spec': { 'f:drained': {}, 'f:label': {} } },
          },
        ],
      }),
    ).toBe('2026-12-01T11:00:00Z');
  });

  it('is unknown without managed fields that own it', () => {
    expect(drainedSince({})).toBeUndefined();
    expect(
      drainedSince({ managedFields: [{ time: 'x', fieldsV1: { 'f:spec': { 'f:drained': {} } } }] }),
    ).toBeUndefined();
    expect(
      drainedSince({
        managedFields: [
          { time: '2026-12-01T11:00:00Z', fieldsV1: { 'f:spec': { 'f:label': {} } } },
        ],
      }),
    ).toBeUndefined();
  });
});
