import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aWorker,
  atRamBudget,
  capabilities,
  devices,
  disconnected,
  drained,
  globalFull,
  health,
  IPHONE,
  ownQueue,
  physicalDevice,
  platformFull,
  requests,
  simulator,
  withoutModel,
  withoutRuntimes,
} from '../../test/fixtures/routing.js';
import type { DeviceSpec } from '../lease-request-schema.js';
import { unblockLines, type UnblockChange } from '../unblock.js';
import { select } from './policy.js';
import type { WorkerView } from './types.js';
import { applyUnblockChange, findUnblocks, type HeldLease } from './unblock.js';

const NOW = Date.parse('2026-12-04T10:00:00Z');
const inMinutes = (minutes: number) => new Date(NOW + minutes * 60_000).toISOString();

function leaseOn(worker: string, minutes: number, device?: string, name = 'lease-1'): HeldLease {
  return { namespace: 'ci', name, worker, endsAt: inMinutes(minutes), platform: 'ios', device };
}

function changesFor(
  request: DeviceSpec,
  views: WorkerView[],
  leases: HeldLease[] = [],
): UnblockChange[] {
  const verdict = findUnblocks({ request, views, leases });
  return verdict.kind === 'changes' ? verdict.changes : [];
}

describe('what would unblock a waiting request', () => {
  it('a drained worker that would serve it: undrain it', () => {
    const views = [aWorker('worker-a', withoutModel(IPHONE)), aWorker('worker-b', drained)];
    expect(changesFor(requests.iphone, views)).toEqual([{ kind: 'undrain', worker: 'worker-b' }]);
    expect(unblockLines(findUnblocks({ request: requests.iphone, views }), NOW)).toEqual([
      'undrain worker-b',
    ]);
  });

  it('a worker lacking only the runtime: that runtime installed there', () => {
    const views = [aWorker('worker-c', withoutRuntimes('ios'))];
    const changes = changesFor(requests.iphoneOn18, views);
    expect(changes).toEqual([
      { kind: 'install-runtime', worker: 'worker-c', platform: 'ios', version: '18.4' },
    ]);
    expect(unblockLines({ kind: 'changes', changes }, NOW)).toEqual([
      'worker-c would serve it with iOS 18.4 installed',
    ]);
  });

  it('a range names the newest version another worker runs, else its own lowest bound', () => {
    const request: DeviceSpec = { platform: 'ios', model: IPHONE, os: '>=18 <19' };
    const lacking = aWorker('worker-c', withoutRuntimes('ios'));
    // worker-d runs 18.4 but cannot take the request (not running).
    const other = aWorker('worker-d', health('unhealthy'));
    expect(changesFor(request, [lacking, other])[0]).toMatchObject({ version: '18.4' });
    expect(changesFor(request, [lacking])[0]).toMatchObject({ version: '18' });
  });

  it('a lease ending on a full worker: the earliest, with the time left', () => {
    const full = aWorker('worker-a', platformFull('ios'));
    const leases = [leaseOn('worker-a', 9, undefined, 'later'), leaseOn('worker-a', 4)];
    const changes = changesFor(requests.iphone, [full], leases);
    expect(changes[0]).toEqual({
      kind: 'lease-ends',
      worker: 'worker-a',
      lease: { namespace: 'ci', name: 'lease-1' },
      endsAt: inMinutes(4),
      platform: 'ios',
    });
    expect(unblockLines({ kind: 'changes', changes }, NOW)[0]).toBe(
      'a lease on worker-a ends in 4m',
    );
  });

  it('a leased physical device: its lease ending makes it pickable again', () => {
    const phone = physicalDevice({ model: IPHONE, state: 'leased' });
    const views = [aWorker('worker-p', devices(phone))];
    expect(changesFor(requests.physicalIphone, views, [leaseOn('worker-p', 2, phone.id)])).toEqual([
      expect.objectContaining({ kind: 'lease-ends', device: phone.id }),
    ]);
  });

  it('a worker at its running limit: a higher limit, naming the limit it is at', () => {
    const views = [aWorker('worker-a', platformFull('ios'))];
    const changes = changesFor(requests.iphone, views);
    expect(changes).toEqual([
      {
        kind: 'raise-limit',
        worker: 'worker-a',
        platform: 'ios',
        platformLimit: { running: 4, limit: 4 },
      },
    ]);
    expect(unblockLines({ kind: 'changes', changes }, NOW)).toEqual([
      'worker-a is at its iOS running limit (4 of 4); a higher limit would let it run',
    ]);
  });

  it('both limits reached: one change raising both', () => {
    const views = [aWorker('worker-a', platformFull('ios'), globalFull())];
    const [change] = changesFor(requests.iphone, views);
    expect(change).toMatchObject({ kind: 'raise-limit', globalLimit: { running: 8, limit: 8 } });
    expect(unblockLines({ kind: 'changes', changes: [change as UnblockChange] }, NOW)[0]).toBe(
      'worker-a is at its iOS running limit (4 of 4) and its global running limit (8 of 8); higher limits would let it run',
    );
  });

  it('cheapest first, at most three', () => {
    const views = [
      aWorker('worker-a', platformFull('ios')),
      aWorker('worker-b', drained),
      aWorker('worker-c', drained),
      aWorker('worker-d', platformFull('ios')),
    ];
    const changes = changesFor(requests.iphone, views, [leaseOn('worker-d', 30)]);
    expect(changes.map((change) => [change.kind, change.worker])).toEqual([
      ['lease-ends', 'worker-d'],
      ['undrain', 'worker-b'],
      ['undrain', 'worker-c'],
    ]);
  });

  it('never offers a change that would not help', () => {
    // Drained and also without the model: undraining alone would not let it run; nor would a
    // lease ending on a worker whose own queue waits first.
    const views = [
      aWorker('worker-a', drained, withoutModel(IPHONE)),
      aWorker('worker-b', platformFull('ios'), ownQueue(2)),
    ];
    expect(
      findUnblocks({ request: requests.iphone, views, leases: [leaseOn('worker-b', 1)] }),
    ).toEqual({ kind: 'nothing-helps' });
  });

  it('nothing helps: it says so', () => {
    const views = [aWorker('worker-a', disconnected), aWorker('worker-b', capabilities())];
    const request: DeviceSpec = { ...requests.iphone, requires: ['camera'] };
    const verdict = findUnblocks({ request, views });
    expect(verdict).toEqual({ kind: 'nothing-helps' });
    expect(unblockLines(verdict, NOW)[0]).toMatch(/^nothing helps: no single change/);
  });

  it('routable as the fleet stands: nothing to change', () => {
    const verdict = findUnblocks({ request: requests.iphone, views: [aWorker('worker-a')] });
    expect(verdict).toEqual({ kind: 'routable', worker: 'worker-a' });
    expect(unblockLines(verdict, NOW)[0]).toMatch(/^nothing to change: worker-a can take it now/);
  });

  it('the views it is asked about are left as they were', () => {
    const views = [aWorker('worker-b', drained), aWorker('worker-a', platformFull('ios'))];
    const before = JSON.stringify(views);
    findUnblocks({ request: requests.iphone, views, leases: [leaseOn('worker-a', 3)] });
    expect(JSON.stringify(views)).toBe(before);
  });
});

describe('a suggested change, applied, makes the request routable', () => {
  // Each worker drawn from forms that block in one way or several.
  const forms: ((name: string) => WorkerView)[] = [
    (name) => aWorker(name),
    (name) => aWorker(name, drained),
    (name) => aWorker(name, drained, platformFull('ios')),
    (name) => aWorker(name, withoutRuntimes('ios')),
    (name) => aWorker(name, withoutRuntimes('ios'), drained),
    (name) => aWorker(name, platformFull('ios')),
    (name) => aWorker(name, globalFull()),
    (name) => aWorker(name, platformFull('ios'), globalFull(), atRamBudget('ios')),
    (name) => aWorker(name, withoutModel(IPHONE)),
    (name) => aWorker(name, disconnected),
    (name) => aWorker(name, ownQueue(1)),
    (name) => aWorker(name, devices(physicalDevice({ model: IPHONE, state: 'leased' }))),
    (name) => aWorker(name, drained, devices(physicalDevice({ model: IPHONE, state: 'leased' }))),
    (name) => aWorker(name, devices(simulator({ model: IPHONE, state: 'leased' }))),
  ];
  const specs: DeviceSpec[] = [
    requests.iphone,
    requests.iphoneOn18,
    { platform: 'ios', model: IPHONE, os: '>=18.5' },
    requests.physicalIphone,
    requests.ipad,
  ];

  it('holds for every change offered, and at most three are offered, cheapest first', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: forms.length - 1 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: specs.length - 1 }),
        fc.array(fc.tuple(fc.nat(4), fc.integer({ min: -1, max: 60 })), { maxLength: 4 }),
        (drawn, spec, drawnLeases) => {
          const views = drawn.map((form, index) =>
            (forms[form] as (n: string) => WorkerView)(`w${index}`),
          );
          const request = specs[spec] as DeviceSpec;
          // Leases on drawn workers, each on a leased device of it when it has one.
          const leases = drawnLeases.flatMap(([index, minutes], n) => {
            const view = views[index];
            if (view === undefined) return [];
            const device = view.status?.devices.find((d) => d.state === 'leased')?.id;
            return [leaseOn(view.name, minutes, device, `lease-${n}`)];
          });
          const verdict = findUnblocks({ request, views, leases });
          if (verdict.kind === 'routable') {
            expect(select(request, views)?.worker).toBe(verdict.worker);
            return;
          }
          expect(select(request, views)).toBeUndefined();
          if (verdict.kind === 'nothing-helps') return;
          expect(verdict.changes.length).toBeGreaterThan(0);
          expect(verdict.changes.length).toBeLessThanOrEqual(3);
          for (const change of verdict.changes) {
            expect(select(request, applyUnblockChange(views, change))).toBeDefined();
          }
          const kinds = verdict.changes.map((change) =>
            ['lease-ends', 'undrain', 'install-runtime', 'raise-limit'].indexOf(change.kind),
          );
          expect(kinds).toEqual([...kinds].sort((a, b) => a - b));
        },
      ),
      { numRuns: 400 },
    );
  });
});
