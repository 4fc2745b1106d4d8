import { describe, expect, it } from 'vitest';
import { LeaseRequestObject } from '../../api/index.js';
import { aLeaseRequest, grantedIphone, grantedRequestStatus } from '../../test/fixtures/objects.js';
import { leaseViewOf } from './lease-view.js';

const GRANTED_AT = '2026-12-04T10:00:00Z';
const EXPIRES_AT = '2026-12-04T11:00:00.000Z';

function request(status: unknown, deleting = false): LeaseRequestObject {
  const object = aLeaseRequest('ci-1').namespace('team-a').ios().spec({ holder: 'ci' }).obj();
  return LeaseRequestObject.parse({
    ...object,
    metadata: {
      ...object.metadata,
      ...(deleting ? { deletionTimestamp: '2026-12-04T10:30:00Z' } : {}),
    },
    status,
  });
}

const granted = grantedRequestStatus({
  worker: 'mac-1',
  expiresAt: EXPIRES_AT,
  grantedAt: GRANTED_AT,
  // Its Lease elsewhere, under another name: the page shows the lease as its holder knows it.
  lease: { name: 'a1b2c3d4', namespace: 'simlock-w-mac-1' },
});

describe('the lease a request holds, as the Leases page shows it', () => {
  it('is the granted request: holder, device, worker, granted at, expiry, by its own name', () => {
    expect(leaseViewOf(request(granted))).toEqual({
      namespace: 'team-a',
      name: 'ci-1',
      worker: 'mac-1',
      holder: 'ci',
      expiresAt: EXPIRES_AT,
      phase: 'Granted',
      device: grantedIphone(),
      grantedAt: GRANTED_AT,
      deleting: false,
    });
  });

  it('says a crashed device is booted again, and a request being deleted as such', () => {
    const recovery = { since: GRANTED_AT, cause: 'shut down', crashes: 1, crashBudget: 3 };
    const view = leaseViewOf(request({ ...granted, recovery }, true));
    expect(view).toMatchObject({ deleting: true, recovery });
    expect(view?.recoveryText).toMatch(/^device iPhone 16 .*shut down/);
  });

  it('is none for a request that holds no lease', () => {
    expect(leaseViewOf(request({ phase: 'Waiting' }))).toBeUndefined();
    expect(leaseViewOf(request({ ...granted, phase: 'Released' }))).toBeUndefined();
  });
});
