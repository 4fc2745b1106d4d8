// The one decision of when a request fails at once instead of waiting (DESIGN.md §4.1, §4.3).
import { describe, expect, it } from 'vitest';
import { iosStatus, physicalIphone } from '../test/fixtures/workers.js';
import { failOnAdmission, failUnlessWaiting, failWhileWaiting } from './fail-now.js';
import { createRoutingPolicy, type WorkerView } from '../api/index.js';

const policy = createRoutingPolicy();

function worker(name: string, extra: Partial<WorkerView> = {}): WorkerView {
  return { name, connection: 'connected', drained: false, status: iosStatus(), ...extra };
}

describe('failing at once', () => {
  it('on admission, a model no known worker offers fails UNKNOWN_MODEL; a served one waits', () => {
    expect(
      failOnAdmission(policy, { platform: 'ios', model: 'iPhone 99' }, [worker('mac-1')]),
    ).toMatchObject({ code: 'UNKNOWN_MODEL' });
    expect(failOnAdmission(policy, { platform: 'ios' }, [worker('mac-1')])).toBeUndefined();
  });

  it('on admission, a fleet where every worker is drained fails NO_CAPACITY (no-worker)', () => {
    expect(
      failOnAdmission(policy, { platform: 'ios' }, [worker('mac-1', { drained: true })]),
    ).toMatchObject({ code: 'NO_CAPACITY', details: { reason: 'no-worker' } });
  });

  it('while waiting, the cannot-serve code of the last worker that could is the failure', () => {
    const lastCannotServe = { code: 'RUNTIME_MISSING', message: 'no iOS 19.0 on mac-1' };
    expect(failWhileWaiting({ spec: { platform: 'ios' }, lastCannotServe }, [], policy)).toEqual(
      lastCannotServe,
    );
    // Another worker might still serve it: it waits.
    expect(
      failWhileWaiting({ spec: { platform: 'ios' }, lastCannotServe }, [worker('mac-2')], policy),
    ).toBeUndefined();
  });

  it('while waiting, a physical request whose enrolled match is gone fails UNKNOWN_MODEL', () => {
    const spec = { platform: 'ios' as const, physical: true, model: 'iPhone 15 Pro' };
    const enrolled = worker('mac-1', { status: iosStatus({ devices: [physicalIphone()] }) });
    expect(failWhileWaiting({ spec }, [enrolled], policy)).toBeUndefined();
    expect(failWhileWaiting({ spec }, [worker('mac-1')], policy)).toMatchObject({
      code: 'UNKNOWN_MODEL',
    });
  });

  it('a request that may not wait fails NO_CAPACITY naming what it asked for', () => {
    expect(failUnlessWaiting({ platform: 'ios', model: 'iPhone 16' })).toMatchObject({
      code: 'NO_CAPACITY',
      details: { reason: 'no-free-worker' },
      message: expect.stringContaining('iPhone 16') as unknown,
    });
  });
});
