import { describe, expect, it } from 'vitest';
import { patchedStatus, resourceVersionOf, statusOf, statusReplacement } from './status-update.js';

describe('statusReplacement', () => {
  it('names the object and the version it was read at, and carries the whole status', () => {
    expect(
      statusReplacement(
        { resource: 'lease', namespace: 'team', name: 'lr-1', resourceVersion: '42' },
        { phase: 'Granted' },
      ),
    ).toEqual({
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'Lease',
      metadata: { name: 'lr-1', namespace: 'team', resourceVersion: '42' },
      status: { phase: 'Granted' },
    });
  });

  it('leaves the namespace out for a cluster-scoped object', () => {
    const body = statusReplacement({ resource: 'worker', name: 'mac-1', resourceVersion: '7' }, {});
    expect(body.kind).toBe('Worker');
    expect(body.metadata).toEqual({ name: 'mac-1', resourceVersion: '7' });
  });
});

describe('patchedStatus', () => {
  it('applies a top-level merge patch: null removes, a value replaces whole', () => {
    expect(
      patchedStatus(
        { phase: 'Pending', message: 'accepted', device: { id: 'a', name: 'x' }, activity: {} },
        { phase: 'Granted', message: null, device: { id: 'b' }, missing: null },
      ),
    ).toEqual({ phase: 'Granted', device: { id: 'b' }, activity: {} });
  });

  it('starts from nothing when the object had no status, and does not change its input', () => {
    const before = { phase: 'Pending' };
    expect(patchedStatus(undefined, { phase: 'Granted', gone: null })).toEqual({
      phase: 'Granted',
    });
    patchedStatus(before, { phase: 'Granted' });
    expect(before).toEqual({ phase: 'Pending' });
  });
});

describe('what the API server answered', () => {
  it('reads the resourceVersion and the status, or nothing from a malformed answer', () => {
    const answer = { metadata: { resourceVersion: '9' }, status: { phase: 'Granted' } };
    expect(resourceVersionOf(answer)).toBe('9');
    expect(statusOf(answer)).toEqual({ phase: 'Granted' });
    expect(resourceVersionOf({ metadata: { resourceVersion: 9 } })).toBeUndefined();
    expect(resourceVersionOf('text')).toBeUndefined();
    expect(statusOf({ status: [] })).toBeUndefined();
    expect(statusOf(undefined)).toBeUndefined();
  });
});
