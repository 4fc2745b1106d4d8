import { describe, expect, it } from 'vitest';
import { grantedIphone } from '../../test/fixtures/objects.js';
import { iosStatus } from '../../test/fixtures/workers.js';
import {
  CAPACITY_REASONS,
  WAITING_REASONS,
  groupReasons,
  reasonsByWorker,
  type AgentQueueEntry,
  type CapacityReason,
  type LeaseRequestObject,
  type WaitingReason,
  type WorkerObject,
  type WorkerReason,
} from '../../api/index.js';
import {
  agentEntryLine,
  controllerRequestLines,
  isListed,
  isUnfinished,
  requestListLines,
  waitingSeconds,
  workerDisplay,
} from './requests.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

function request(
  name: string,
  overrides: {
    spec?: Partial<LeaseRequestObject['spec']>;
    status?: LeaseRequestObject['status'];
    namespace?: string;
  } = {},
): LeaseRequestObject {
  return {
    metadata: {
      name,
      namespace: overrides.namespace ?? 'default',
      creationTimestamp: ago(60),
    },
    spec: {
      platform: 'ios',
      model: 'iPhone 16',
      holder: 'ci',
      waitTimeoutSeconds: 300,
      durationSeconds: 3600,
      ...overrides.spec,
    },
    ...(overrides.status ? { status: overrides.status } : {}),
  };
}

/** A waiting status as the controller writes it: the reasons grouped (ADR 0033). */
function waiting(workers: WorkerReason[], position = 1, queuedSecondsAgo = 42) {
  return {
    phase: 'Waiting' as const,
    position,
    queuedAt: ago(queuedSecondsAgo),
    workers: groupReasons(workers),
  };
}

function worker(name: string, label?: string, queue: AgentQueueEntry[] = []): WorkerObject {
  return {
    metadata: { name },
    spec: { drained: false, ...(label !== undefined ? { label } : {}) },
    status: iosStatus({ agentVersion: '1', queueDepth: queue.length, queue }),
  };
}

/** The text the CLI prints for every reason (iOS), as DESIGN.md §3.2 gives them, first letter lowered. */
const REASON_LINES: Record<WaitingReason, string> = {
  disconnected: 'not connected',
  incompatible: 'protocol mismatch',
  drained: 'drained',
  'not-ready': 'not ready',
  'capability-missing': 'missing a required capability',
  'no-driver': 'no driver for iOS',
  'unknown-model': 'model not offered',
  'runtime-missing': 'oS not installed',
  unhealthy: 'unhealthy',
  busy: 'busy with its own queue',
  full: 'full',
  'no-free-physical': 'every matching device is leased or absent',
  'not-chosen': 'not chosen this time',
};

const CAPACITY_LINES: Record<CapacityReason, { ios: string; android: string }> = {
  'platform-running-limit': {
    ios: 'full: running limit for iOS',
    android: 'full: running limit for Android',
  },
  'global-running-limit': { ios: 'full: running limit', android: 'full: running limit' },
  'ram-budget': { ios: 'full: RAM budget', android: 'full: RAM budget' },
  'device-not-present': {
    ios: 'full: matching device not present',
    android: 'full: matching device not present',
  },
  'disk-low': { ios: 'full: disk space low', android: 'full: disk space low' },
};

const options = (workers: WorkerObject[] = []) => ({ now: NOW, worker: workerDisplay(workers) });

describe('list --requests (DESIGN.md §7.1)', () => {
  it('prints the "after" block exactly', () => {
    const workers = [
      worker('w-a', 'wrk_a'),
      worker('w-b', 'wrk_b', [
        {
          id: 'req_9',
          holder: 'local-agent',
          platform: 'ios',
          model: 'iPhone 16',
          queuedAt: ago(5),
          reason: 'full',
          capacityReason: 'platform-running-limit',
        },
      ]),
      worker('w-c', 'wrk_c'),
      worker('w-d', 'wrk_d'),
    ];
    const requests = [
      request('req_3', {
        status: waiting([
          { worker: 'w-a', reason: 'drained' },
          { worker: 'w-b', reason: 'full', capacityReason: 'platform-running-limit' },
          { worker: 'w-c', reason: 'runtime-missing' },
          { worker: 'w-d', reason: 'busy' },
        ]),
      }),
    ];
    expect(requestListLines(requests, workers, { now: NOW }).join('\n')).toBe(
      [
        'Request req_3: ci, ios iPhone 16, queued at 1, waiting 42s',
        '  wrk_a: drained',
        '  wrk_b: full: running limit for iOS',
        '  wrk_c: oS not installed',
        '  wrk_d: busy with its own queue',
        'Request req_9: local-agent on wrk_b, ios iPhone 16, queued at 1, waiting 5s — full: running limit for iOS',
      ].join('\n'),
    );
    // A status an older controller wrote, an item per worker, prints the same lines.
    const perWorker = requests.map((r) =>
      r.status ? { ...r, status: { ...r.status, workers: reasonsByWorker(r.status) } } : r,
    );
    expect(requestListLines(perWorker, workers, { now: NOW })).toEqual(
      requestListLines(requests, workers, { now: NOW }),
    );
  });

  it('prints the done-when pair: one drained worker, one at its iOS running limit', () => {
    const lines = controllerRequestLines(
      request('r1', {
        status: waiting([
          { worker: 'ns-a', reason: 'drained' },
          { worker: 'ns-b', reason: 'full', capacityReason: 'platform-running-limit' },
        ]),
      }),
      options([worker('ns-a', 'wrk_a'), worker('ns-b', 'wrk_b')]),
    );
    expect(lines.slice(1)).toEqual(['  wrk_a: drained', '  wrk_b: full: running limit for iOS']);
  });
});

describe('a controller entry prints one indented line per worker', () => {
  it.each(WAITING_REASONS)('for the reason %s, named by label', (reason) => {
    const lines = controllerRequestLines(
      request('r1', { status: waiting([{ worker: 'host-1', reason }]) }),
      options([worker('host-1', 'wrk_1')]),
    );
    expect(lines).toEqual([
      'Request r1: ci, ios iPhone 16, queued at 1, waiting 42s',
      `  wrk_1: ${REASON_LINES[reason]}`,
    ]);
  });

  it.each(WAITING_REASONS)('for the reason %s, named by name without a label', (reason) => {
    const lines = controllerRequestLines(
      request('r1', { status: waiting([{ worker: 'host-1', reason }]) }),
      options([worker('host-1')]),
    );
    expect(lines[1]).toBe(`  host-1: ${REASON_LINES[reason]}`);
  });

  it("ends the request's line with the controller's estimate while it waits", () => {
    const lines = controllerRequestLines(
      request('r1', {
        status: {
          ...waiting(
            [{ worker: 'ns-b', reason: 'full', capacityReason: 'platform-running-limit' }],
            2,
            40,
          ),
          estimate: {
            grantAt: new Date(NOW + 170_000).toISOString(),
            basis: '2 leases of iPhone 16 end before; 1 ahead of you',
          },
        },
      }),
      options([worker('ns-b', 'wrk_b')]),
    );
    expect(lines[0]).toMatch(
      /, queued at 2, waiting 40s, about 3m \(2 leases of iPhone 16 end before; 1 ahead of you\)$/,
    );
  });

  it('names a worker it has no object for by its name', () => {
    const lines = controllerRequestLines(
      request('r1', { status: waiting([{ worker: 'gone', reason: 'disconnected' }]) }),
      options([]),
    );
    expect(lines[1]).toBe('  gone: not connected');
  });

  it.each([
    ['ios', 'no driver for iOS'],
    ['android', 'no driver for Android'],
  ] as const)('no-driver names the request’s platform (%s)', (platform, text) => {
    const lines = controllerRequestLines(
      request('r1', {
        spec: { platform },
        status: waiting([{ worker: 'w', reason: 'no-driver' }]),
      }),
      options([]),
    );
    expect(lines[1]).toBe(`  w: ${text}`);
  });

  it('full reads plain without a capacity reason', () => {
    const lines = controllerRequestLines(
      request('r1', { status: waiting([{ worker: 'w', reason: 'full' }]) }),
      options([]),
    );
    expect(lines[1]).toBe('  w: full');
  });

  it.each(CAPACITY_REASONS)('full with %s reads its capacity text, on iOS and Android', (cr) => {
    for (const platform of ['ios', 'android'] as const) {
      const lines = controllerRequestLines(
        request('r1', {
          spec: { platform },
          status: waiting([{ worker: 'w', reason: 'full', capacityReason: cr }]),
        }),
        options([]),
      );
      expect(lines[1]).toBe(`  w: ${CAPACITY_LINES[cr][platform]}`);
    }
  });

  it('lower-cases only the first letter', () => {
    const lines = controllerRequestLines(
      request('r1', {
        status: waiting([
          { worker: 'a', reason: 'runtime-missing' },
          { worker: 'b', reason: 'full', capacityReason: 'ram-budget' },
          { worker: 'c', reason: 'no-driver' },
        ]),
      }),
      options([]),
    );
    expect(lines.slice(1)).toEqual([
      '  a: oS not installed',
      '  b: full: RAM budget',
      '  c: no driver for iOS',
    ]);
  });

  it('has a text for every reason in the contract, and for every capacity reason', () => {
    expect(Object.keys(REASON_LINES).sort()).toEqual([...WAITING_REASONS].sort());
    expect(Object.keys(CAPACITY_LINES).sort()).toEqual([...CAPACITY_REASONS].sort());
    const printed = WAITING_REASONS.map(
      (reason) =>
        controllerRequestLines(
          request('r1', { status: waiting([{ worker: 'w', reason }]) }),
          options([]),
        )[1],
    );
    expect(new Set(printed).size).toBe(WAITING_REASONS.length);
    for (const line of printed) expect(line).toMatch(/^ {2}w: [a-z]\S*/);
  });
});

describe('an agent’s own entry', () => {
  const entry: AgentQueueEntry = {
    id: 'req_9',
    holder: 'local-agent',
    platform: 'ios',
    model: 'iPhone 16',
    queuedAt: ago(5),
    reason: 'busy',
  };

  it('prints one line with its reason after an em dash', () => {
    expect(agentEntryLine(entry, 'wrk_b', 2, NOW)).toBe(
      'Request req_9: local-agent on wrk_b, ios iPhone 16, queued at 2, waiting 5s — busy with its own queue',
    );
  });

  it('prints no indented lines, and counts positions in its worker’s queue', () => {
    const second = { ...entry, id: 'req_10', queuedAt: ago(3) };
    const lines = requestListLines([], [worker('host-b', 'wrk_b', [entry, second])], { now: NOW });
    expect(lines).toEqual([
      'Request req_9: local-agent on wrk_b, ios iPhone 16, queued at 1, waiting 5s — busy with its own queue',
      'Request req_10: local-agent on wrk_b, ios iPhone 16, queued at 2, waiting 3s — busy with its own queue',
    ]);
  });

  it('leaves out a missing holder and model', () => {
    const bare: AgentQueueEntry = { id: 'x', platform: 'android', reason: 'full' };
    expect(agentEntryLine(bare, 'host', 1, NOW)).toBe(
      'Request x: on host, android, queued at 1, waiting 0s — full',
    );
  });
});

describe('which requests, in which order', () => {
  it('lists requests not yet ended, in queue order, then those without a position by age and name', () => {
    const lines = requestListLines(
      [
        request('granted', { status: { phase: 'Granted' } }),
        request('second', { status: waiting([], 2, 30) }),
        request('failed', {
          status: { phase: 'Failed', error: { code: 'NO_CAPACITY', message: 'no' } },
        }),
        request('new', { spec: { holder: undefined, model: undefined, class: 'tablet' } }),
        request('first', { status: waiting([], 1, 40) }),
        request('dispatched', { status: { phase: 'Dispatched', worker: 'w' } }),
      ],
      [],
      { now: NOW },
    );
    expect(lines).toEqual([
      'Request first: ci, ios iPhone 16, queued at 1, waiting 40s',
      'Request second: ci, ios iPhone 16, queued at 2, waiting 30s',
      // Same age: by name.
      'Request dispatched: ci, ios iPhone 16, waiting 60s',
      'Request new: ios tablet, waiting 60s',
    ]);
  });

  it('names requests namespace/name across namespaces (-A)', () => {
    const lines = requestListLines(
      [request('r1', { namespace: 'team-a', status: waiting([]) })],
      [],
      { now: NOW, withNamespace: true },
    );
    expect(lines).toEqual(['Request team-a/r1: ci, ios iPhone 16, queued at 1, waiting 42s']);
  });

  it('prints worker lines only while the request waits in the queue', () => {
    const dispatched = request('r1', {
      status: { phase: 'Dispatched', workers: [{ worker: 'w', reason: 'drained' }] },
    });
    expect(controllerRequestLines(dispatched, options([]))).toHaveLength(1);
  });

  it('says the stage and its estimate of a request whose worker makes or boots the device', () => {
    const booting = request('r1', {
      status: {
        phase: 'Dispatched',
        worker: 'mac-a',
        queuedAt: ago(42),
        progress: { stage: 'booting', since: ago(3), estimatedSeconds: 25 },
      },
    });
    expect(controllerRequestLines(booting, options([worker('mac-a', 'worker-a')]))).toEqual([
      'Request r1: ci, ios iPhone 16, booting on worker-a (about 25 s), waiting 42s',
    ]);
    const noEstimate = request('r2', {
      spec: { model: undefined, holder: undefined },
      status: {
        phase: 'Dispatched',
        worker: 'mac-a',
        queuedAt: ago(5),
        progress: { stage: 'provisioning', since: ago(3) },
      },
    });
    expect(controllerRequestLines(noEstimate, options([]))).toEqual([
      'Request r2: ios, provisioning on mac-a, waiting 5s',
    ]);
  });

  it('knows which phases are unfinished', () => {
    expect(isUnfinished(request('r'))).toBe(true);
    expect(isUnfinished(request('r', { status: { phase: 'Released' } }))).toBe(false);
  });

  it('counts whole seconds, never negative', () => {
    expect(waitingSeconds(ago(1.9), NOW)).toBe(1);
    expect(waitingSeconds(new Date(NOW + 5000), NOW)).toBe(0);
    expect(waitingSeconds(undefined, NOW)).toBe(0);
    expect(waitingSeconds('not a time', NOW)).toBe(0);
  });
});

describe('a granted request whose device is recovering', () => {
  const recovering = request('ci-9', {
    status: {
      phase: 'Granted',
      worker: 'mac-1',
      device: grantedIphone(),
      recovery: {
        since: ago(12),
        cause: 'shut down',
        crashes: 1,
        crashBudget: 3,
        estimatedSeconds: 40,
      },
    },
  });

  it('is listed with the waiting ones, recovering, with the cause and the estimate', () => {
    expect(isListed(recovering)).toBe(true);
    expect(isListed(request('ci-8', { status: { phase: 'Granted' } }))).toBe(false);
    expect(requestListLines([recovering], [worker('mac-1', 'wrk_a')], { now: NOW })).toEqual([
      'Request ci-9: ci, ios iPhone 16, recovering on wrk_a for 12s: device iPhone 16 (sim-1) crashed (shut down): booting it again, back in about 40 s',
    ]);
  });
});
