import { describe, expect, it } from 'vitest';
import type { RequestView, WorkerView } from './wire.js';
import {
  describeSpec,
  devicesByState,
  expiresIn,
  formatDuration,
  heartbeatState,
  inspectorRows,
  liveness,
  quarantineText,
  screenshotCommand,
  stageSummary,
  waitingRequests,
  workerTitle,
} from './views.js';

const worker = (name: string, extra: Partial<WorkerView> = {}): WorkerView => ({
  name,
  drained: false,
  devices: [],
  queue: [],
  queueDepth: 0,
  ...extra,
});

const request = (name: string, extra: Partial<RequestView> = {}): RequestView => ({
  namespace: 'team-a',
  name,
  deleting: false,
  spec: { platform: 'ios', waitTimeoutSeconds: 300, durationSeconds: 3600 },
  phase: 'Waiting',
  ...extra,
});

describe('console views', () => {
  it('names a worker by its label, else its name', () => {
    expect(workerTitle(worker('host-17', { label: 'Mac mini 17' }))).toBe('Mac mini 17');
    expect(workerTitle(worker('host-17'))).toBe('host-17');
  });

  it('says why and since when a device is quarantined, and its next retry or the operator it waits for', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    const since = '2026-03-01T11:48:00Z';
    expect(
      quarantineText(
        { reason: 'boot failed', since, retries: 1, nextRetryAt: '2026-03-01T12:04:10Z' },
        now,
      ),
    ).toBe('quarantined 12m 00s: boot failed · retry 2 in 4m 10s');
    expect(quarantineText({ reason: 'boot failed', since, retries: 3 }, now)).toBe(
      'quarantined 12m 00s: boot failed · 3 retries failed, waits for an operator',
    );
    expect(quarantineText({ reason: 'reset failed', since }, now)).toBe(
      'quarantined 12m 00s: reset failed',
    );
  });

  it('writes durations for people', () => {
    expect(formatDuration(4_900)).toBe('4s');
    expect(formatDuration(182_000)).toBe('3m 02s');
    expect(formatDuration(2 * 3600_000 + 5 * 60_000)).toBe('2h 05m');
    expect(formatDuration(-5)).toBe('0s');
    expect(expiresIn('2030-01-01T00:01:00Z', Date.parse('2030-01-01T00:00:00Z'))).toBe('1m 00s');
    expect(expiresIn('2030-01-01T00:00:00Z', Date.parse('2030-01-01T00:00:01Z'))).toBe('expired');
  });

  it('gives inspector rows the reason texts of the contract, by label or raw name', () => {
    const known = new Map([['ns-worker-a', worker('ns-worker-a', { label: 'worker-a' })]]);
    const rows = inspectorRows(
      [
        { worker: 'ns-worker-a', reason: 'drained' },
        { worker: 'ns-worker-b', reason: 'full', capacityReason: 'platform-running-limit' },
      ],
      'ios',
      known,
    );
    expect(rows).toEqual([
      { worker: 'ns-worker-a', title: 'worker-a', text: 'Drained' },
      { worker: 'ns-worker-b', title: 'ns-worker-b', text: 'Full: running limit for iOS' },
    ]);
  });

  it('orders waiting requests by queue position and leaves settled ones out', () => {
    const ordered = waitingRequests([
      request('b', { position: 2 }),
      request('granted', { phase: 'Granted' }),
      request('a', { position: 1 }),
      request('gone', { position: 0, deleting: true }),
    ]);
    expect(ordered.map((entry) => entry.name)).toEqual(['a', 'b']);
  });

  it('counts devices by state in the contract order, and says who is connected', () => {
    const device = { name: 'x', model: 'iPhone 16', platform: 'ios', os: '18.4' } as const;
    expect(
      devicesByState([
        { ...device, id: '1', physical: false, class: 'phone', state: 'leased' },
        { ...device, id: '2', physical: false, class: 'phone', state: 'ready' },
        { ...device, id: '3', physical: false, class: 'phone', state: 'leased' },
      ]),
    ).toEqual([
      { state: 'ready', count: 1 },
      { state: 'leased', count: 2 },
    ]);
    const now = Date.parse('2030-01-01T00:00:30Z');
    const beat = { renewTime: '2030-01-01T00:00:00Z', durationSeconds: 40 };
    expect(heartbeatState(worker('w', { heartbeat: beat }), now)).toBe('connected');
    expect(heartbeatState(worker('w', { heartbeat: { ...beat, durationSeconds: 10 } }), now)).toBe(
      'late',
    );
    expect(heartbeatState(worker('w'), now)).toBe('never');
  });

  it('describes specs and picks the screenshot tool per device', () => {
    expect(describeSpec({ platform: 'ios', model: 'iPhone 16', os: '18.4', physical: true })).toBe(
      'iOS iPhone 16, OS 18.4, physical',
    );
    expect(screenshotCommand({ platform: 'android', physical: true })?.tool).toBe('adb');
    expect(screenshotCommand({ platform: 'ios', physical: false })?.args).toEqual([
      'io',
      'screenshot',
      '-',
    ]);
    expect(screenshotCommand({ platform: 'ios', physical: true })).toBeUndefined();
  });

  it('says the stage a dispatched request is at, with its estimate', () => {
    const since = '2026-12-01T12:00:00Z';
    expect(stageSummary({ stage: 'booting', since, estimatedSeconds: 25 })).toBe(
      'booting · about 25 s',
    );
    expect(stageSummary({ stage: 'provisioning', since, estimatedSeconds: 150 })).toBe(
      'provisioning · about 3 min',
    );
    expect(stageSummary({ stage: 'provisioning', since })).toBe('provisioning');
    expect(stageSummary(undefined)).toBeUndefined();
  });

  it('says Live only while the stream is open and every watch is listed and none fails', () => {
    const feed = { hidden: [], unwatched: [], syncing: [], failing: [] };
    expect(liveness('open', feed)).toEqual({ live: true, text: '● Live' });
    expect(liveness('connecting', feed).live).toBe(false);
    expect(liveness('reconnecting', feed).text).toBe('○ Reconnecting…');
    expect(liveness('open', undefined).live).toBe(false);
    expect(liveness('open', { ...feed, syncing: ['Workers'] }).text).toBe(
      '○ Not live yet: loading',
    );
    const failing = { what: 'Leases in team-a', error: 'forbidden', since: '2025-01-01T00:00:00Z' };
    expect(liveness('open', { ...feed, failing: [failing] })).toEqual({
      live: false,
      text: '⚠ Not live: 1 watch fails',
    });
  });
});
