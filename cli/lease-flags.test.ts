import { describe, expect, it } from 'vitest';
import { exitCodeFor, type SimlockError } from '../api/index.js';
import { simlockErrorOf } from '../test/simlock-errors.js';
import { leaseOrder } from './lease-flags.js';

const usage = (argv: Record<string, unknown>): SimlockError =>
  simlockErrorOf(() => leaseOrder(argv));

describe('lease flags', () => {
  it('turn into a LeaseRequest spec', () => {
    expect(
      leaseOrder({
        platform: 'ios',
        device: 'iPhone 16',
        class: 'phone',
        os: '>=18 <19',
        physical: true,
        requires: ['camera', 'nfc,bluetooth'],
        noWait: true,
        timeout: '90s',
        duration: '2h',
        holder: 'ci',
        name: 'my-lease',
      }),
    ).toEqual({
      name: 'my-lease',
      hold: false,
      ownerPod: undefined,
      spec: {
        platform: 'ios',
        model: 'iPhone 16',
        class: 'phone',
        os: '>=18 <19',
        physical: true,
        requires: ['camera', 'nfc', 'bluetooth'],
        noWait: true,
        waitTimeoutSeconds: 90,
        durationSeconds: 7200,
        holder: 'ci',
      },
    });
  });

  it('fill the contract’s defaults: wait 300s, last 1h', () => {
    expect(leaseOrder({ platform: 'android' })).toEqual({
      hold: false,
      ownerPod: undefined,
      spec: { platform: 'android', waitTimeoutSeconds: 300, durationSeconds: 3600 },
    });
  });

  it('hold with a renewal interval, an idle timeout and an owner pod', () => {
    const order = leaseOrder({
      platform: 'ios',
      hold: true,
      renewEvery: '5s',
      idleTimeout: '10m',
      owner: 'pod/ci-job-1',
    });
    expect(order).toMatchObject({
      hold: true,
      ownerPod: 'ci-job-1',
      spec: { holderRenewSeconds: 5, idleTimeoutSeconds: 600 },
    });
    expect(() => leaseOrder({ platform: 'ios', hold: true, detach: true })).toThrow(/--hold/);
    expect(() => leaseOrder({ platform: 'ios', renewEvery: '5s' })).toThrow(
      /--renew-every: needs --hold/,
    );
    expect(() => leaseOrder({ platform: 'ios', owner: 'job/x' })).toThrow(
      /--owner: must be pod\/NAME/,
    );
    expect(() => leaseOrder({ platform: 'ios', duration: '1m', idleTimeout: '5m' })).toThrow(
      /--idle-timeout: spec.idleTimeoutSeconds must not be longer than spec.durationSeconds/,
    );
  });

  it('accept plain seconds and minutes', () => {
    const { spec } = leaseOrder({ platform: 'ios', timeout: '300', duration: '5m' });
    expect([spec.waitTimeoutSeconds, spec.durationSeconds]).toEqual([300, 300]);
  });

  it.each([
    [{}, '--platform', 'is required'],
    [{ platform: 'windows' }, '--platform', 'ios or android'],
    [{ platform: 'ios', class: 'watch' }, '--class', 'phone or tablet'],
    [{ platform: 'ios', os: 'eighteen' }, '--os', 'os must be a version'],
    [{ platform: 'ios', device: '' }, '--device', ''],
    [{ platform: 'ios', timeout: 'soon' }, '--timeout', 'not a duration'],
    [{ platform: 'ios', timeout: '0s' }, '--timeout', 'at least 1s'],
    [{ platform: 'ios', timeout: '25h' }, '--timeout', 'at most 86400s'],
    [{ platform: 'ios', duration: '8d' }, '--duration', 'not a duration'],
    [{ platform: 'ios', duration: '200h' }, '--duration', 'at most 604800s'],
    [{ platform: 'ios', requires: ['a,,b'] }, '--requires', ''],
    [{ platform: 'ios', requires: ['x'.repeat(64)] }, '--requires', ''],
    [{ platform: 'ios', holder: 'x'.repeat(101) }, '--holder', ''],
    [{ platform: 'ios', name: 'Not_A_Name' }, '--name', 'lower-case name'],
  ])('refuse %j as a USAGE error naming %s (exit 2)', (argv, flag, words) => {
    const error = usage(argv);
    expect(error.code).toBe('USAGE');
    expect(exitCodeFor(error.code)).toBe(2);
    expect(error.message.startsWith(`${flag}: `)).toBe(true);
    expect(error.message).toContain(words);
    expect(error.details).toEqual({ flag });
  });
});
