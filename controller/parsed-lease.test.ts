import { describe, expect, it } from 'vitest';
import { aLease, grantedIphone } from '../test/fixtures/objects.js';
import { parseLease } from './parsed-lease.js';

const dispatched = () =>
  aLease('l1')
    .namespace('simlock-w-mac-1')
    .worker('mac-1')
    .forRequest('team', 'r1')
    .expiresAt('2026-12-05T12:00:00.000Z')
    .obj();

describe('a Lease as the controller reads it', () => {
  it('reads its key, its request and its expiry', () => {
    const lease = parseLease(dispatched());
    expect(lease).toMatchObject({
      key: 'simlock-w-mac-1/l1',
      requestKey: 'team/r1',
      requestUid: 'uid-r1',
      worker: 'mac-1',
      expiresAt: Date.parse('2026-12-05T12:00:00.000Z'),
      status: undefined,
    });
  });

  it('parses one object once: every handler of its event gets the same answer', () => {
    const object = dispatched();
    const first = parseLease(object);
    expect(parseLease(object)).toBe(first);
    // Shared by every caller, so no caller may change it for the others.
    expect(Object.isFrozen(first)).toBe(true);
  });

  it("reads a new version of the Lease anew: the agent's grant is seen", () => {
    const object = dispatched();
    expect(parseLease(object)?.deviceId).toBeUndefined();
    const granted = { ...object, status: { phase: 'Granted', device: grantedIphone() } };
    expect(parseLease(granted)).toMatchObject({ deviceId: 'sim-1', physical: false });
    expect(parseLease(object)?.deviceId).toBeUndefined();
  });

  it('answers undefined for what is not a Lease, every time', () => {
    const notALease = { metadata: { name: 'x' }, spec: { worker: 42 } };
    expect(parseLease(notALease)).toBeUndefined();
    expect(parseLease(notALease)).toBeUndefined();
    expect(parseLease(null)).toBeUndefined();
    expect(parseLease('lease')).toBeUndefined();
  });
});
