// The Lease a dispatch creates, and a Lease as the controller reads it.
import { describe, expect, it } from 'vitest';
import { grantedIphone } from '../test/fixtures/objects.js';
import {
  LEASE_FINALIZER,
  LEASE_WITHDRAWN_ANNOTATION,
  REQUEST_NAMESPACE_LABEL,
  WORKER_LABEL,
} from '../api/index.js';
import { leaseFor } from './lease-object.js';
import { parseLease } from './parsed-lease.js';

const request = {
  name: 'r1',
  namespace: 'ci',
  uid: 'uid-r1',
  spec: {
    platform: 'ios' as const,
    model: 'iPhone 16',
    physical: false,
    noWait: false,
    waitTimeoutSeconds: 300,
    durationSeconds: 3600,
    holder: 'job-7',
  },
};

describe('leaseFor', () => {
  it("puts the Lease in its worker's namespace, named by the request's UID and naming the request, with the agent finalizer", () => {
    const lease = leaseFor(request, 'mac-1', Date.parse('2026-01-01T00:00:00Z'));
    expect(lease).toEqual({
      apiVersion: 'simlock.dev/v1alpha1',
      kind: 'Lease',
      metadata: {
        name: 'uid-r1',
        namespace: 'simlock-w-mac-1',
        labels: { [WORKER_LABEL]: 'mac-1', [REQUEST_NAMESPACE_LABEL]: 'ci' },
        finalizers: [LEASE_FINALIZER],
      },
      spec: {
        worker: 'mac-1',
        request: { namespace: 'ci', name: 'r1', uid: 'uid-r1' },
        device: { platform: 'ios', model: 'iPhone 16', physical: false },
        expiresAt: '2026-01-01T01:00:00.000Z',
        durationSeconds: 3600,
        holder: 'job-7',
      },
    });
  });

  it('expires at the maximum lease duration when the request asks for more', () => {
    const capped = leaseFor(request, 'mac-1', Date.parse('2026-01-01T00:00:00Z'), 1_800_000) as {
      spec: Record<string, unknown>;
    };
    expect(capped.spec).toMatchObject({
      expiresAt: '2026-01-01T00:30:00.000Z',
      durationSeconds: 1800,
    });
  });
});

describe('parseLease', () => {
  const lease = leaseFor(request, 'mac-1', Date.parse('2026-01-01T00:00:00Z')) as {
    metadata: Record<string, unknown>;
  };

  it('reads what the controller needs of a Lease', () => {
    const parsed = parseLease({
      ...lease,
      metadata: { ...lease.metadata, uid: 'uid-l1', resourceVersion: '7' },
      status: {
        phase: 'Granted',
        device: grantedIphone(),
      },
    });
    expect(parsed).toMatchObject({
      key: 'simlock-w-mac-1/uid-r1',
      requestKey: 'ci/r1',
      requestUid: 'uid-r1',
      uid: 'uid-l1',
      worker: 'mac-1',
      finalizers: [LEASE_FINALIZER],
      deleting: false,
      lettingGo: false,
      resourceVersion: '7',
      deviceId: 'sim-1',
      expiresAt: Date.parse('2026-01-01T01:00:00Z'),
    });
    expect(parsed?.status?.phase).toBe('Granted');
  });

  it('reads a Lease marked withdrawn, or being deleted, as being let go', () => {
    const withdrawn = { ...lease.metadata, annotations: { [LEASE_WITHDRAWN_ANNOTATION]: 'true' } };
    expect(parseLease({ ...lease, metadata: withdrawn })?.lettingGo).toBe(true);
    const deleting = { ...lease.metadata, deletionTimestamp: '2026-01-01T00:00:05Z' };
    expect(parseLease({ ...lease, metadata: deleting })).toMatchObject({
      deleting: true,
      lettingGo: true,
    });
  });

  it('reads a status that does not parse as no answer yet', () => {
    expect(parseLease({ ...lease, status: { phase: 'Exploded' } })?.status).toBeUndefined();
  });

  it('answers undefined for what is not a Lease (a Status from a delete)', () => {
    expect(parseLease({ kind: 'Status', metadata: {}, status: 'Success' })).toBeUndefined();
  });
});
