import { describe, expect, it } from 'vitest';
import { DEFAULT_ATTENTION, attentionItems, type AttentionItem } from './attention.js';
import type { LeaseView, RequestView, WorkerView } from './wire.js';
import { iphoneSimulator } from '../../test/fixtures/workers.js';

const NOW = Date.parse('2026-12-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();
const inSeconds = (seconds: number) => new Date(NOW + seconds * 1000).toISOString();
const beat = { renewTime: ago(5), durationSeconds: 40 };
const capacity = {
  global: { limit: 4, running: 2, evictable: 0 },
  platforms: { ios: { limit: 4, running: 2, evictable: 0, atRamBudget: false } },
};

const worker = (name: string, extra: Partial<WorkerView> = {}): WorkerView => ({
  name,
  label: name.replace('ns-', ''),
  drained: false,
  health: 'running',
  protocol: 1,
  ready: true,
  capacity,
  devices: [],
  queue: [],
  queueDepth: 0,
  heartbeat: beat,
  ...extra,
});

const request = (name: string, extra: Partial<RequestView> = {}): RequestView => ({
  namespace: 'team-a',
  name,
  deleting: false,
  spec: { platform: 'ios', waitTimeoutSeconds: 3600, durationSeconds: 3600 },
  phase: 'Waiting',
  ...extra,
});

const lease = (name: string, expiresAt: string): LeaseView => ({
  namespace: 'team-a',
  name,
  worker: 'ns-worker-a',
  holder: 'ci',
  expiresAt,
  phase: 'Granted',
  deleting: false,
});

function items(
  input: { workers?: WorkerView[]; requests?: RequestView[]; leases?: LeaseView[] },
  heartbeats = true,
): AttentionItem[] {
  return attentionItems(
    {
      workers: input.workers ?? [],
      requests: new Map((input.requests ?? []).map((r) => [`${r.namespace}/${r.name}`, r])),
      leases: input.leases ?? [],
      heartbeats,
    },
    DEFAULT_ATTENTION,
    NOW,
  );
}

const brief = (list: AttentionItem[]) =>
  list.map((item) => [item.title, item.subject, item.detail, item.command ?? item.fix]);

describe('the Attention page', () => {
  it('shows nothing for a healthy fleet', () => {
    expect(items({ workers: [worker('ns-worker-a')], requests: [request('fresh')] })).toEqual([]);
  });

  it('lists workers not connected, incompatible, unhealthy and not ready, with what to run', () => {
    const list = items({
      workers: [
        worker('ns-late', { heartbeat: { renewTime: ago(95), durationSeconds: 40 } }),
        worker('ns-never', { heartbeat: undefined }),
        worker('ns-old', { protocol: 7, agentVersion: '9.0.0' }),
        worker('ns-sick', { health: 'unhealthy' }),
        worker('ns-blind', { ready: false }),
      ],
    });
    expect(brief(list)).toEqual([
      [
        'Not connected',
        'late',
        'its agent last renewed its heartbeat 1m 35s ago',
        'simlock-agent doctor --config agent.yaml',
      ],
      [
        'Not connected',
        'never',
        'its agent has never renewed its heartbeat',
        'simlock-agent doctor --config agent.yaml',
      ],
      [
        'Protocol mismatch',
        'old',
        'its agent 9.0.0 speaks protocol 7; this simlock speaks 1',
        "Install the agent of this simlock's release on its host",
      ],
      [
        'Unhealthy',
        'sick',
        'its agent says it is unhealthy',
        'simlock-agent doctor --config agent.yaml',
      ],
      [
        'Not ready',
        'blind',
        'its agent has not read its drivers yet (no catalog or capacity)',
        'simlock-agent doctor --config agent.yaml',
      ],
    ]);
  });

  it('says nothing of connections when heartbeats are not watched', () => {
    expect(items({ workers: [worker('ns-never', { heartbeat: undefined })] }, false)).toEqual([]);
  });

  it('lists a worker drained longer than the threshold with its undrain, and not a fresh drain', () => {
    const list = items({
      workers: [
        worker('ns-long', { drained: true, drainedSince: ago(2 * 3600) }),
        worker('ns-short', { drained: true, drainedSince: ago(60) }),
        worker('ns-unknown', { drained: true }),
      ],
    });
    expect(brief(list)).toEqual([
      ['Drained', 'long', 'drained for 2h 00m at least', 'kubectl simlock worker undrain ns-long'],
    ]);
  });

  it('lists a platform at its RAM budget after what waits for a person', () => {
    const full = {
      ...capacity,
      platforms: { ios: { limit: 4, running: 3, evictable: 0, atRamBudget: true } },
    };
    const list = items({
      workers: [worker('ns-full', { capacity: full }), worker('ns-sick', { health: 'unhealthy' })],
    });
    expect(list.map((item) => [item.title, item.urgent])).toEqual([
      ['Unhealthy', true],
      ['Full: RAM budget', false],
    ]);
    expect(list[1]?.detail).toBe('iOS: 3 of 4 running, no RAM for another');
  });

  it('lists quarantined devices with unquarantine; one that waits for an operator is urgent', () => {
    const list = items({
      workers: [
        worker('ns-worker-a', {
          devices: [
            iphoneSimulator('sim-retries', {
              state: 'quarantined',
              quarantine: {
                reason: 'boot failed',
                since: ago(600),
                retries: 1,
                nextRetryAt: inSeconds(120),
              },
            }),
            iphoneSimulator('sim-waits', {
              state: 'quarantined',
              quarantine: { reason: 'boot failed', since: ago(600), retries: 3 },
            }),
            iphoneSimulator('sim-fine'),
          ],
        }),
      ],
    });
    expect(list.map((item) => [item.device, item.urgent, item.detail, item.command])).toEqual([
      [
        'sim-waits',
        true,
        'quarantined 10m 00s: boot failed · 3 retries failed, waits for an operator',
        'kubectl simlock device unquarantine ns-worker-a sim-waits',
      ],
      [
        'sim-retries',
        false,
        'quarantined 10m 00s: boot failed · retry 2 in 2m 00s',
        'kubectl simlock device unquarantine ns-worker-a sim-retries',
      ],
    ]);
    expect(list[0]?.subject).toBe('iPhone 16 on worker-a');
  });

  it('lists requests waiting longer than the threshold, with their summary', () => {
    const list = items({
      requests: [
        request('long', { queuedAt: ago(11 * 60), summary: 'worker-a: Drained' }),
        request('short', { queuedAt: ago(60) }),
        request('done', { queuedAt: ago(3600), phase: 'Granted' }),
      ],
    });
    expect(brief(list)).toEqual([
      [
        'Waiting',
        'team-a/long',
        'waiting for 11m 00s: worker-a: Drained',
        'Its page says, worker by worker, why it waits',
      ],
    ]);
  });

  it('lists leases expiring soon with the extend that keeps them, and those at the maximum', () => {
    const granted = (name: string, durationSeconds: number, extra: Partial<RequestView> = {}) =>
      request(name, {
        phase: 'Granted',
        spec: { platform: 'ios', waitTimeoutSeconds: 300, durationSeconds },
        ...extra,
      });
    const list = items({
      requests: [
        granted('soon', 3600, { expiringSoon: true }),
        granted('capped', 86_400, { expiringSoon: true }),
        granted('old', 86_000),
        granted('calm', 3600),
      ],
      leases: [
        lease('soon', inSeconds(240)),
        lease('capped', inSeconds(240)),
        // 86 000 s asked, 5 000 s left: it has lived 81 000 s, over 90 % of 24 h.
        lease('old', inSeconds(5000)),
        lease('calm', inSeconds(3000)),
      ],
    });
    expect(brief(list)).toEqual([
      [
        'Lease ending',
        'team-a/capped',
        'expires in 4m 00s (holder ci); at the maximum lease duration (1d 0h): it cannot be extended',
        'Its holder finishes before then, or leases a device again',
      ],
      [
        'Lease ending',
        'team-a/old',
        'expires in 1h 23m (holder ci); lived 22h 30m of at most 1d 0h',
        'kubectl simlock extend old --by 6m40s -n team-a',
      ],
      [
        'Lease ending',
        'team-a/soon',
        'expires in 4m 00s (holder ci); lived 56m 00s of at most 1d 0h',
        'kubectl simlock extend soon --by 30m -n team-a',
      ],
    ]);
  });
});
