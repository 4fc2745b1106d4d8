// DESIGN.md §4.5's acceptance, with three workers: never refuse while capacity exists elsewhere,
// never hang when none exists, serve as soon as it frees.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCluster } from '../../test/cluster/harness.js';
import { waitingWithReasons } from '../../test/cluster/plugin.js';
import { errorOf, startAcceptanceFleet, type AcceptanceFleet } from './fleet.js';
import { reasonsByWorker } from '../../api/index.js';

const cluster = useCluster('cap');
let fleet: AcceptanceFleet;

function simulators(count: number) {
  return {
    models: [{ name: 'iPhone 16', platform: 'ios', class: 'phone' }],
    runtimes: [{ platform: 'ios', version: '18.4' }],
    devices: Array.from({ length: count }, (_, index) => ({
      id: `SIM-${String(index + 1).padStart(4, '0')}`,
      name: `iPhone 16 (${index + 1})`,
      model: 'iPhone 16',
      platform: 'ios',
      os: '18.4',
    })),
    bootMs: 20,
  };
}

beforeAll(async () => {
  fleet = await startAcceptanceFleet(cluster, [
    // worker-a is full from the start: its iOS running limit is 0.
    {
      name: 'worker-a',
      script: simulators(2),
      limits: { running: 8, platforms: { ios: { running: 0 } } },
    },
    {
      name: 'worker-b',
      script: simulators(5),
      limits: { running: 8, platforms: { ios: { running: 5 } } },
    },
    {
      name: 'worker-c',
      script: simulators(5),
      limits: { running: 8, platforms: { ios: { running: 5 } } },
    },
  ]);
}, 150_000);

afterAll(async () => {
  await fleet?.stop();
});

describe('capacity across the fleet (DESIGN.md §4.5)', () => {
  it('one worker full: ten lease requests all succeed on the others', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        fleet.simlock(
          ['lease', '--platform', 'ios', '--name', `r${index}`, '--timeout', '60s'],
          90_000,
        ),
      ),
    );
    for (const result of results) {
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/ on worker-[bc]$/m);
    }
  }, 120_000);

  it('all full: --no-wait fails NO_CAPACITY at once; a waiting request waits with reasons and times out', async () => {
    const started = Date.now();
    const noWait = await fleet.leaseIos('--no-wait');
    expect(noWait.exitCode).toBe(11);
    expect(errorOf(noWait).code).toBe('NO_CAPACITY');
    expect(Date.now() - started).toBeLessThan(10_000);

    const waiting = fleet.leaseIos('--name', 'late', '--timeout', '6s');
    const request = await waitingWithReasons(fleet.fleet, 'late', 3);
    expect(reasonsByWorker(request.status).map((entry) => entry.reason)).toEqual([
      'full',
      'full',
      'full',
    ]);
    const result = await waiting;
    expect(result.exitCode).toBe(16);
    expect(errorOf(result).code).toBe('TIMEOUT');
  });

  it('release one: a waiting request is granted', async () => {
    const waiting = fleet.leaseIos('--name', 'next', '--timeout', '60s');
    await waitingWithReasons(fleet.fleet, 'next', 3);
    const released = await fleet.simlock(['release', 'r3']);
    expect(released.exitCode, released.stderr).toBe(0);
    const result = await waiting;
    expect(result.exitCode, result.stderr).toBe(0);
  });
});
