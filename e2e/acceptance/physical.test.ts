// DESIGN.md §3.3's end-to-end list, through the controller, with the plugin as a user runs it: worker-a has
// only iOS simulators, worker-b an enrolled iPhone 15 Pro on iOS 18.4.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerObject, type Device, reasonsByWorker } from '../../api/index.js';
import { simlockPath } from '../../runtime/index.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import {
  enrolledIphone,
  errorOf,
  iosSimulators,
  startAcceptanceFleet,
  type AcceptanceFleet,
} from './fleet.js';

const cluster = useCluster('phys');
let fleet: AcceptanceFleet;
const workerB = { platforms: ['ios'], devices: [enrolledIphone] };

beforeAll(async () => {
  fleet = await startAcceptanceFleet(
    cluster,
    [
      {
        name: 'worker-a',
        script: iosSimulators,
        limits: { running: 4, platforms: { ios: { running: 3 } } },
      },
      {
        name: 'worker-b',
        script: workerB,
        limits: { running: 0, platforms: { ios: { running: 0 } } },
      },
      // Android emulators only: the platform is served, no Android phone is enrolled.
      {
        name: 'worker-c',
        script: {
          models: [{ name: 'Pixel 8', platform: 'android', class: 'phone' }],
          runtimes: [{ platform: 'android', version: '34' }],
          devices: [{ id: 'Pixel_8_API_34', model: 'Pixel 8', platform: 'android', os: '34' }],
        },
        limits: { running: 1, platforms: { android: { running: 1 } } },
      },
    ],
    { probeIntervalMs: 500 },
  );
}, 150_000);

afterAll(async () => {
  await fleet?.stop();
});

/** `kubectl simlock lease --platform ios --physical` with more flags. */
const leasePhysical = (...flags: string[]) => fleet.leaseIos('--physical', ...flags);

/** Waits until worker-b's status lists devices that `check` accepts. */
async function untilWorkerBLists(check: (devices: Device[]) => boolean): Promise<void> {
  await eventually(
    async () => {
      const worker = WorkerObject.parse(
        await fleet.fleet.admin.get(simlockPath('worker', { name: fleet.worker('worker-b') })),
      );
      return check(worker.status?.devices ?? []) ? true : undefined;
    },
    { what: "worker-b's devices" },
  );
}

/** Waits until request `name` waits, and answers worker-b's reason for it. */
async function reasonOfWorkerB(name: string): Promise<string | undefined> {
  const request = await fleet.fleet.requestWhere(name, (r) => r.status?.phase === 'Waiting');
  return reasonsByWorker(request.status).find((entry) => entry.worker === fleet.worker('worker-b'))
    ?.reason;
}

async function release(name: string): Promise<void> {
  const result = await fleet.simlock(['release', name]);
  expect(result.exitCode, result.stderr).toBe(0);
}

describe('physical devices through the fleet (DESIGN.md §3.3)', () => {
  it('grants --physical the enrolled iPhone on the worker that has it, not the one with free simulators', async () => {
    const result = await leasePhysical('--name', 'p1');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(
      `Lease p1: ${enrolledIphone.name} ${enrolledIphone.id} (physical) on worker-b`,
    );
    await release('p1');
  });

  it("fails --physical --class tablet at once with UNKNOWN_MODEL, exit 12, and the worker's message", async () => {
    const result = await leasePhysical('--class', 'tablet');
    expect(result.exitCode).toBe(12);
    expect(errorOf(result)).toMatchObject({
      code: 'UNKNOWN_MODEL',
      message: 'no enrolled physical device can match ios class tablet',
    });
  });

  it('fails --platform android --physical at once with UNKNOWN_MODEL when none is enrolled', async () => {
    const result = await fleet.simlock(['lease', '--platform', 'android', '--physical']);
    expect(result.exitCode).toBe(12);
    expect(errorOf(result).code).toBe('UNKNOWN_MODEL');
  });

  it('grants --device "iPhone 15 Pro" --os ">=18 <19"; refuses ">=17 <18" and "18", naming the range form', async () => {
    const granted = await leasePhysical(
      '--device',
      'iPhone 15 Pro',
      '--os',
      '>=18 <19',
      '--name',
      'p2',
    );
    expect(granted.exitCode, granted.stderr).toBe(0);
    expect(granted.stdout).toContain(enrolledIphone.id);
    await release('p2');
    const older = await leasePhysical('--device', 'iPhone 15 Pro', '--os', '>=17 <18');
    expect(older.exitCode).toBe(12);
    const exact = await leasePhysical('--device', 'iPhone 15 Pro', '--os', '18');
    expect(exact.exitCode).toBe(12);
    expect(errorOf(exact).message).toContain('--os ">=18 <19"');
  });

  it('fails --no-wait with NO_CAPACITY, exit 11, while the only match is leased; a second request waits and is granted after release', async () => {
    const first = await leasePhysical('--name', 'p3');
    expect(first.exitCode, first.stderr).toBe(0);
    const noWait = await leasePhysical('--no-wait');
    expect(noWait.exitCode).toBe(11);
    expect(errorOf(noWait).code).toBe('NO_CAPACITY');

    const second = leasePhysical('--name', 'p4');
    expect(await reasonOfWorkerB('p4')).toBe('no-free-physical');
    await release('p3');
    const result = await second;
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('(physical) on worker-b');
    await release('p4');
  });

  it('grants a request without --physical a simulator although the iPhone is ready', async () => {
    const result = await fleet.leaseIos('--name', 'v1');
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Lease v1: iPhone 16 SIM-000\d on worker-a$/m);
    await release('v1');
  });

  it('re-dispatches a waiting physical request when its unplugged iPhone is plugged back in', async () => {
    const unplugged = {
      ...workerB,
      devices: [{ ...enrolledIphone, presence: { present: false, reason: 'not-present' } }],
    };
    await fleet.running.setScript(fleet.worker('worker-b'), unplugged);
    await untilWorkerBLists((devices) => devices[0]?.presence?.present === false);
    const lease = leasePhysical('--name', 'p5');
    await fleet.fleet.requestWhere('p5', (request) => request.status?.phase === 'Waiting');
    const pluggedAt = Date.now();
    await fleet.running.setScript(fleet.worker('worker-b'), workerB);
    const result = await lease;
    expect(result.exitCode, result.stderr).toBe(0);
    // One probe interval (500 ms) plus under a second, with the plugin's own polling on top.
    expect(Date.now() - pluggedAt).toBeLessThan(500 + 1000 + 1000);
    await release('p5');
  });

  it('fails a waiting physical request with UNKNOWN_MODEL once its last match is removed on the worker', async () => {
    // Unplugged: the worker still lists the iPhone, absent, so a request for it waits.
    await fleet.running.setScript(fleet.worker('worker-b'), { platforms: ['ios'], devices: [] });
    await untilWorkerBLists((devices) => devices[0]?.state === 'absent');
    const waiting = leasePhysical('--name', 'p7');
    expect(await reasonOfWorkerB('p7')).toBe('no-free-physical');
    // Removed for good on the worker (`simlock device remove <id>` there).
    const removed = await fleet.local(
      'worker-b',
      'DELETE',
      `/v1/local/devices/${enrolledIphone.id}`,
    );
    expect(removed.status).toBe(200);
    const result = await waiting;
    expect(result.exitCode).toBe(12);
    expect(errorOf(result).code).toBe('UNKNOWN_MODEL');
    await fleet.running.setScript(fleet.worker('worker-b'), workerB);
  });

  it('fails --physical at once with NO_CAPACITY when the only match is on a drained worker', async () => {
    await untilWorkerBLists((devices) => devices.length === 1);
    const drained = await fleet.simlock(['worker', 'drain', fleet.worker('worker-b')]);
    expect(drained.exitCode, drained.stderr).toBe(0);
    const result = await leasePhysical();
    expect(result.exitCode).toBe(11);
    expect(errorOf(result)).toMatchObject({ code: 'NO_CAPACITY' });
    await fleet.simlock(['worker', 'undrain', fleet.worker('worker-b')]);
  });
});
