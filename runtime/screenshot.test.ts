import { describe, expect, it } from 'vitest';
import { LeaseRequestObject, SimlockError } from '../api/index.js';
import { aLeaseRequest } from '../test/fixtures/objects.js';
import { screenshotThroughProxy } from './screenshot.js';

/** The request ci-1 with this status, as the caller reads it. */
function request(status: unknown): LeaseRequestObject {
  return LeaseRequestObject.parse({
    ...aLeaseRequest('ci-1').namespace('team-a').obj(),
    status: { worker: 'mac-1', ...(status as object) },
  });
}

const iphone = {
  id: 'UDID-1',
  name: 'iPhone of the lab',
  model: 'iPhone 16',
  platform: 'ios',
  os: '18.2',
  physical: true,
};

/** What the call threw, and whether it asked for the proxy first. */
async function attempt(
  status: unknown,
  proxy: () => { url: string; token: string } = () => ({ url: 'http://127.0.0.1:1', token: 't' }),
): Promise<{ error: SimlockError; askedProxy: boolean }> {
  let askedProxy = false;
  const error = await screenshotThroughProxy({
    namespace: 'team-a',
    name: 'ci-1',
    request: request(status),
    proxy: () => {
      askedProxy = true;
      return proxy();
    },
  }).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof SimlockError)) throw new Error(`not a SimlockError: ${String(error)}`);
  return { error, askedProxy };
}

describe('screenshotThroughProxy', () => {
  it('refuses a lease that is not granted, before it looks for the proxy', async () => {
    const { error, askedProxy } = await attempt({ phase: 'Pending' });
    expect([error.code, error.message]).toEqual([
      'LEASE_NOT_ACTIVE',
      'lease team-a/ci-1 is not granted',
    ]);
    expect(askedProxy).toBe(false);
  });

  it('refuses a physical iPhone (devicectl takes no screenshot), before it looks for the proxy', async () => {
    const { error, askedProxy } = await attempt({ phase: 'Granted', device: iphone });
    expect([error.code, error.message]).toEqual([
      'TOOL_NOT_ALLOWED',
      'no screenshot for iPhone of the lab: devicectl cannot take one of a physical iPhone or iPad',
    ]);
    expect(askedProxy).toBe(false);
  });

  it("says the caller's reason when it cannot reach the proxy (the console without a token)", async () => {
    const simulator = { ...iphone, name: 'iPhone 16 sim', physical: false };
    const { error, askedProxy } = await attempt({ phase: 'Granted', device: simulator }, () => {
      throw new SimlockError('UNAUTHENTICATED', 'no token');
    });
    expect([error.code, error.message]).toEqual(['UNAUTHENTICATED', 'no token']);
    expect(askedProxy).toBe(true);
  });
});
