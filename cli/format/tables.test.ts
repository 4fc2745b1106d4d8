import { describe, expect, it } from 'vitest';
import { aLeaseRequest, grantedIphone } from '../../test/fixtures/objects.js';
import {
  iosCapacity,
  iosStatus,
  iphoneSimulator,
  physicalIphone,
} from '../../test/fixtures/workers.js';
import { LeaseRequestObject, type WorkerObject } from '../../api/index.js';
import type { LeaseUse } from '../../client/index.js';
import {
  connection,
  deviceColumns,
  deviceRows,
  expires,
  humanDuration,
  idle,
  leaseColumns,
  presence,
  renderTable,
  workerColumns,
  type Column,
  type DeviceRow,
} from './tables.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const at = (secondsFromNow: number) => new Date(NOW + secondsFromNow * 1000).toISOString();

describe('renderTable', () => {
  const columns: Column<{ a: string; b?: number; c: boolean }>[] = [
    { header: 'name', cell: (row) => row.a },
    { header: 'count', cell: (row) => row.b },
    { header: 'extra', cell: (row) => row.c, wide: true },
  ];
  const rows = [
    { a: 'short', b: 1, c: true },
    { a: 'a-longer-name', c: false },
  ];

  it('pads each column to its widest cell plus three spaces, headers upper-cased', () => {
    expect(renderTable(columns, rows)).toEqual([
      'NAME            COUNT',
      'short           1',
      'a-longer-name   <none>',
    ]);
  });

  it('adds -o wide columns, and drops the header with --no-headers', () => {
    expect(renderTable(columns, rows, { wide: true, noHeaders: true })).toEqual([
      'short           1        true',
      'a-longer-name   <none>   false',
    ]);
  });

  it('prints only the header for no rows', () => {
    expect(renderTable(columns, [])).toEqual(['NAME   COUNT']);
  });
});

describe('humanDuration (kubectl ages)', () => {
  it.each([
    [0, '0s'],
    [42, '42s'],
    [119, '119s'],
    [192, '3m12s'],
    [300, '5m'],
    [45 * 60, '45m'],
    [5 * 3600 + 10 * 60, '5h10m'],
    [30 * 3600, '30h'],
    [3 * 86400 + 4 * 3600, '3d4h'],
    [12 * 86400, '12d'],
    [3 * 365 * 86400, '3y'],
  ])('%d s reads %s', (seconds, text) => {
    expect(humanDuration(seconds * 1000)).toBe(text);
  });

  it('never reads negative', () => {
    expect(humanDuration(-5000)).toBe('0s');
  });
});

describe('leases (their requests)', () => {
  // Dispatched 10 minutes ago for 69 minutes: it ends in 59.
  const lease = LeaseRequestObject.parse({
    ...aLeaseRequest('lease-x')
      .namespace('team-a')
      .ios()
      .duration(4140)
      .spec({ holder: 'ci' })
      .createdAt(NOW - 700_000)
      .obj(),
    status: {
      phase: 'Granted',
      worker: 'mac-1',
      lease: 'lease-x',
      device: grantedIphone(),
      expiresAt: at(3540),
    },
  });
  /** What its Lease alone says: granted a minute ago (the agent's time), and this exec record. */
  const used = (activity?: { lastExecAt: number; runningUntil: number }): LeaseUse => ({
    grantedAt: at(-60),
    ...(activity
      ? {
          activity: {
            lastExecAt: at(activity.lastExecAt),
            runningUntil: at(activity.runningUntil),
          },
        }
      : {}),
  });
  const granted = () => used();

  it('shows name, worker, device, phase, when it expires and how long it has been idle', () => {
    expect(renderTable(leaseColumns(NOW, false, granted), [lease])).toEqual([
      'NAME      WORKER   DEVICE      PHASE     EXPIRES   IDLE',
      'lease-x   mac-1    iPhone 16   Granted   in 59m    60s',
    ]);
  });

  it('adds the namespace with -A, and device id, holder and age (since the dispatch) with -o wide', () => {
    expect(renderTable(leaseColumns(NOW, true, granted), [lease], { wide: true })).toEqual([
      'NAMESPACE   NAME      WORKER   DEVICE      PHASE     EXPIRES   IDLE   DEVICE-ID   HOLDER   AGE',
      'team-a      lease-x   mac-1    iPhone 16   Granted   in 59m    60s    sim-1       ci       10m',
    ]);
    // The length as granted counts when the controller wrote it (capped below the spec's).
    const capped = { ...lease, spec: { ...lease.spec, durationSeconds: 86_400 } };
    capped.status = { ...lease.status!, durationSeconds: 4140 };
    expect(
      renderTable(leaseColumns(NOW, false), [capped], { wide: true, noHeaders: true })[0],
    ).toMatch(/ 10m$/);
  });

  it('reads busy while an exec runs, and idle from the end of the last one', () => {
    // The proxy's running record: started 20 s ago, renewed, reaching 25 s ahead.
    expect(idle(lease, used({ lastExecAt: -20, runningUntil: 25 }), NOW)).toBe('busy');
    // Its end, written after: idle from the end, 12 s ago.
    expect(idle(lease, used({ lastExecAt: -12, runningUntil: -12 }), NOW)).toBe('12s');
    // A proxy that died while its exec ran: idle from where its record lapsed.
    expect(idle(lease, used({ lastExecAt: -50, runningUntil: -5 }), NOW)).toBe('5s');
    // None ran: idle from the grant; not granted: nothing to say.
    expect(idle(lease, used(), NOW)).toBe('60s');
    const released = { ...lease, status: { ...lease.status!, phase: 'Released' as const } };
    expect(idle(released, used(), NOW)).toBeUndefined();
    // Its Lease could not be read (the holder may not): unknown, never guessed from the grant.
    expect(idle(lease, undefined, NOW)).toBeUndefined();
  });

  it('reads a lease whose device is booted again after a crash as Recovering', () => {
    const recovering = {
      ...lease,
      status: {
        ...lease.status!,
        recovery: { since: at(-5), cause: 'shut down', crashes: 1, crashBudget: 3 },
      },
    };
    expect(
      renderTable(leaseColumns(NOW, false, granted), [recovering], { noHeaders: true }),
    ).toEqual(['lease-x   mac-1   iPhone 16   Recovering   in 59m   60s']);
  });

  it('reads a past expiry as expired, and expiring soon as the request says', () => {
    const past = { ...lease, status: { ...lease.status!, expiresAt: at(-1) } };
    expect(renderTable(leaseColumns(NOW, false), [past], { noHeaders: true })).toEqual([
      'lease-x   mac-1   iPhone 16   Granted   expired   <none>',
    ]);
    // Expiring soon as the controller's condition on the request says, not by a guess here.
    const soon = {
      ...lease,
      status: {
        ...lease.status!,
        expiresAt: at(240),
        conditions: [
          {
            type: 'ExpiringSoon',
            status: 'True' as const,
            reason: 'ExpiringSoon',
            message: `the lease expires at ${at(240)}`,
            lastTransitionTime: at(-60),
          },
        ],
      },
    };
    expect(renderTable(leaseColumns(NOW, false), [soon], { noHeaders: true })).toEqual([
      'lease-x   mac-1   iPhone 16   Granted   in 4m, expiring soon   <none>',
    ]);
    expect(expires('garbage', NOW)).toBe('<unknown>');
    expect(expires(at(240), NOW)).toBe('in 4m');
  });
});

function workerObject(overrides: Partial<WorkerObject> = {}): WorkerObject {
  return {
    metadata: { name: 'mac-1', creationTimestamp: at(-7200) },
    spec: { drained: false, label: 'Mac one' },
    status: iosStatus({
      agentVersion: '0.1.0',
      endpoint: 'https://mac-1:8443',
      capacity: iosCapacity({ running: 1 }, { running: 1 }),
      devices: [
        iphoneSimulator('sim-1', { state: 'leased' }),
        physicalIphone({
          id: '00008110',
          presence: { present: false, reason: 'locked' },
        }),
      ],
    }),
    ...overrides,
  };
}

describe('workers', () => {
  it('shows label, drained, health, running/limit, devices and connected', () => {
    const lines = renderTable(
      workerColumns(NOW, () => 'true'),
      // A worker whose agent has not reported yet has no status.
      [workerObject(), { metadata: { name: 'new' }, spec: { drained: true } }],
    );
    expect(lines).toEqual([
      'NAME    LABEL     DRAINED   HEALTH    RUNNING   DEVICES   CONNECTED',
      'mac-1   Mac one   false     running   1/4       2         true',
      'new     <none>    true      <none>    <none>    0         true',
    ]);
  });

  it('adds queue, endpoint, agent and age with -o wide', () => {
    const [, line] = renderTable(
      workerColumns(NOW, () => 'false'),
      [workerObject()],
      {
        wide: true,
      },
    );
    expect(line).toBe(
      'mac-1   Mac one   false     running   1/4       2         false       0       https://mac-1:8443   0.1.0   120m',
    );
  });

  it('is connected while the heartbeat is younger than its duration', () => {
    expect(connection({ renewTime: at(-10), leaseDurationSeconds: 30 }, NOW)).toBe('true');
    expect(connection({ renewTime: at(-31), leaseDurationSeconds: 30 }, NOW)).toBe('false');
    expect(connection({ renewTime: at(-39) }, NOW)).toBe('true');
    expect(connection({}, NOW)).toBe('false');
    expect(connection(undefined, NOW)).toBe('false');
  });
});

describe('devices', () => {
  it('lists every device of every worker with its presence', () => {
    const lines = renderTable(deviceColumns(), deviceRows([workerObject()]));
    expect(lines).toEqual([
      'WORKER   ID         NAME              MODEL           PLATFORM   OS     PHYSICAL   STATE    PRESENCE',
      'mac-1    sim-1      iPhone 16         iPhone 16       ios        18.4   false      leased   <none>',
      "mac-1    00008110   Tester's iPhone   iPhone 15 Pro   ios        18.4   true       ready    locked",
    ]);
  });

  it('says with -o wide for how long and why a device is quarantined', () => {
    const broken = workerObject({
      status: iosStatus({
        devices: [
          iphoneSimulator('sim-2', {
            state: 'quarantined',
            quarantine: { reason: 'boot failed: timed out', since: at(-720) },
          }),
        ],
      }),
    });
    const [header, line] = renderTable(deviceColumns(NOW), deviceRows([broken]), { wide: true });
    expect(header).toMatch(/CLASS\s+QUARANTINED$/);
    expect(line).toMatch(/quarantined\s+<none>\s+phone\s+12m: boot failed: timed out$/);
  });

  it('says with -o wide when a quarantined device is tried next, or that it waits for an operator', () => {
    const row = (quarantine: NonNullable<DeviceRow['device']['quarantine']>) =>
      deviceRows([
        workerObject({
          status: iosStatus({
            devices: [iphoneSimulator('sim-2', { state: 'quarantined', quarantine })],
          }),
        }),
      ]);
    const retrying = renderTable(
      deviceColumns(NOW),
      row({ reason: 'boot failed', since: at(-720), retries: 1, nextRetryAt: at(240) }),
      { wide: true },
    );
    expect(retrying[1]).toMatch(/12m, retry 2 in 4m: boot failed$/);
    const waiting = renderTable(
      deviceColumns(NOW),
      row({ reason: 'boot failed; retry 3 failed: no answer', since: at(-7200), retries: 3 }),
      { wide: true },
    );
    expect(waiting[1]).toMatch(/120m, waits for operator: boot failed; retry 3 failed: no answer$/);
  });

  it('reads presence as present, or the reason it is not', () => {
    expect(presence({ present: true })).toBe('present');
    expect(presence({ present: false, reason: 'untrusted' })).toBe('untrusted');
    expect(presence(undefined)).toBeUndefined();
  });
});
