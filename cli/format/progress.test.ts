import { describe, expect, it } from 'vitest';
import type { LeaseRequestObject } from '../../api/index.js';
import { grantLine, progressLines, progressSignature, repaint } from './progress.js';
import { workerDisplay } from './requests.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

function request(status: LeaseRequestObject['status']): LeaseRequestObject {
  return {
    metadata: { name: 'lease-abc12', namespace: 'ci', creationTimestamp: ago(10) },
    spec: { platform: 'ios', waitTimeoutSeconds: 300, durationSeconds: 3600 },
    ...(status ? { status } : {}),
  };
}

type Status = NonNullable<LeaseRequestObject['status']>;

/** The request waiting at `position`, with these reasons, changed as given. */
function waiting(
  position: number,
  workers: Status['workers'],
  extra: Partial<Status> = {},
): LeaseRequestObject {
  return request({ phase: 'Waiting', position, workers, ...extra });
}

/** What `kubectl simlock lease` shows of it, `now` being NOW. */
const shown = (request: LeaseRequestObject) => progressLines(request, { now: NOW, worker: labels });

const labels = workerDisplay([
  { metadata: { name: 'mac-b' }, spec: { drained: false, label: 'wrk_b' } },
]);

describe('the grant line (DESIGN.md §7.2)', () => {
  const device = {
    id: '00008110-001A2B3C4D5E',
    name: 'iPhone 15 Pro',
    model: 'iPhone 15 Pro',
    platform: 'ios' as const,
    os: '18.4',
  };

  it('says (physical) for a physical device, on the worker’s label, naming the lease by its request', () => {
    // Its Lease is named by the request's UID in the worker's namespace (ADR 0034): not said.
    const granted = request({
      phase: 'Granted',
      worker: 'mac-b',
      lease: '0b5c9a1e-1111-4000-8000-000000000001',
      leaseNamespace: 'simlock-w-mac-b',
      device: { ...device, physical: true },
    });
    expect(grantLine(granted, labels)).toBe(
      'Lease lease-abc12: iPhone 15 Pro 00008110-001A2B3C4D5E (physical) on wrk_b',
    );
  });

  it('says nothing of physical for a simulator, and names a worker without a label by name', () => {
    const granted = request({
      phase: 'Granted',
      worker: 'mac-c',
      device: { ...device, id: 'sim-1', name: 'iPhone 16', physical: false },
    });
    expect(grantLine(granted, labels)).toBe('Lease lease-abc12: iPhone 16 sim-1 on mac-c');
  });
});

describe('the waiting display', () => {
  it('shows position, waiting time and one line per worker with its reason', () => {
    const lines = shown(
      waiting(
        2,
        [
          { worker: 'mac-a', reason: 'drained' },
          { worker: 'mac-b', reason: 'full', capacityReason: 'platform-running-limit' },
        ],
        { queuedAt: ago(7) },
      ),
    );
    expect(lines).toEqual([
      'Request lease-abc12: queued at 2, waiting 7s',
      '  mac-a: drained',
      '  wrk_b: full: running limit for iOS',
    ]);
  });

  it("adds the controller's estimate, or says it has none and why", () => {
    const estimated = (estimate: { grantAt?: string; basis: string }) =>
      shown(waiting(2, [], { queuedAt: ago(40), estimate }));
    expect(
      estimated({
        grantAt: new Date(NOW + 185_000).toISOString(),
        basis: '2 leases of iPhone 16 end before; 1 ahead of you',
      }),
    ).toEqual([
      'Request lease-abc12: queued at 2, waiting 40s, about 3m (2 leases of iPhone 16 end before; 1 ahead of you)',
    ]);
    expect(
      estimated({
        basis: 'no basis: no worker that would serve it is busy; it waits for the fleet',
      }),
    ).toEqual([
      'Request lease-abc12: queued at 2, waiting 40s, no estimate: no worker that would serve it is busy; it waits for the fleet',
    ]);
    expect(progressSignature(waiting(2, [], { estimate: { basis: 'a' } }))).not.toBe(
      progressSignature(waiting(2, [], { estimate: { basis: 'b' } })),
    );
  });

  it('says pending before the controller has seen it, and where it was dispatched', () => {
    expect(shown(request(undefined))).toEqual(['Request lease-abc12: pending, waiting 10s']);
    expect(shown(request({ phase: 'Dispatched', worker: 'mac-b' }))).toEqual([
      'Request lease-abc12: dispatched to wrk_b, waiting 10s',
    ]);
  });

  it('says the stage, the device and its estimate while the worker makes or boots it', () => {
    const making = (stage: 'provisioning' | 'booting', estimatedSeconds?: number) => {
      const dispatched = request({
        phase: 'Dispatched',
        worker: 'mac-b',
        progress: {
          stage,
          since: ago(1),
          ...(estimatedSeconds !== undefined ? { estimatedSeconds } : {}),
        },
      });
      return { ...dispatched, spec: { ...dispatched.spec, model: 'iPhone 16' } };
    };
    expect(shown(making('provisioning', 40))).toEqual([
      'Request lease-abc12: provisioning iPhone 16 on wrk_b (about 40 s), waiting 10s',
    ]);
    expect(shown(making('booting'))).toEqual([
      'Request lease-abc12: booting iPhone 16 on wrk_b, waiting 10s',
    ]);
    // A log off a terminal prints a line for each stage.
    expect(progressSignature(making('booting', 25))).not.toBe(
      progressSignature(making('provisioning', 40)),
    );
  });

  it('changes its signature with the reasons, not with the time', () => {
    const a = waiting(1, [{ worker: 'w', reason: 'busy' }]);
    const later = { ...a, metadata: { ...a.metadata, creationTimestamp: ago(100) } };
    const b = waiting(1, [{ worker: 'w', reason: 'full' }]);
    expect(progressSignature(later)).toBe(progressSignature(a));
    expect(progressSignature(b)).not.toBe(progressSignature(a));
  });
});

describe('repaint', () => {
  it('draws the first block as it is', () => {
    expect(repaint(0, ['a', 'b'])).toBe('a\nb\n');
  });

  it('moves up over the old block and clears it before drawing', () => {
    expect(repaint(3, ['x'])).toBe('\x1b[3F\x1b[Jx\n');
    expect(repaint(2, [])).toBe('\x1b[2F\x1b[J');
  });

  it('cuts lines to the terminal width so none wraps', () => {
    expect(repaint(0, ['abcdefghij'], 6)).toBe('abcd…\n');
    expect(repaint(0, ['abcde'], 6)).toBe('abcde\n');
  });
});
