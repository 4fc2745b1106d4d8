// The assume cache: the controller's own dispatches in the worker views it routes on, named as
// kube-scheduler's cache is (pkg/scheduler/backend/cache): a dispatch is *assumed* on its worker
// while its Lease is created and answered; a grant is *confirmed* and counts until the view shows
// it, or until it *expires* (the agent reports its view debounced); a dispatch that came to
// nothing is *forgotten*, and a grant released is forgotten only once its Lease is gone (the agent
// reclaims the device first: request-shell.ts). A device whose Lease the agent let go of is
// assumed free the same way.
// The views themselves are adjusted by assume.ts (pure); the agent's check still wins.
import type { DeviceSpec } from '../api/index.js';
import {
  assumeDispatches,
  viewShowsFreed,
  viewShowsLeased,
  type PendingDispatch,
  type ReleasedDevice,
} from './assume.js';
import type { WorkerView } from '../api/index.js';
import type { Fleet } from './walk.js';

interface Assumption {
  worker: string;
  spec: DeviceSpec;
  /** Once confirmed (granted): the device, and when. */
  deviceId?: string | undefined;
  confirmedAt?: number | undefined;
}

export class AssumeCache {
  private readonly assumptions = new Map<string, Assumption>();
  /** Devices whose Lease the agent let go of (reclaimed), by worker, and when. */
  private readonly released = new Map<string, (ReleasedDevice & { at: number })[]>();
  /** Views with the assumptions in them, by worker, while the view and the assumptions hold. */
  private readonly adjusted = new Map<
    string,
    { base: WorkerView; signature: string; view: WorkerView }
  >();

  /**
   * @param ttlMs how long a confirmed grant counts before the view shows it (the agent writes
   *   devices taken after a wait of its own: ADR 0029)
   * @param releasedTtlMs how long a release counts before the view shows it (written at once)
   */
  constructor(
    private readonly ttlMs: number,
    private readonly releasedTtlMs = ttlMs,
  ) {}

  /** A dispatch of request `key` to `worker`: it takes room there from now on. */
  assume(key: string, worker: string, spec: DeviceSpec): void {
    this.assumptions.set(key, { worker, spec });
  }

  /**
   * The dispatch was granted `deviceId` at `at`: it counts until the view shows it, or expires. A
   * device assumed released and granted again is free no more: the view, not written since, still
   * shows it taken by the lease before, which reads as this grant shown, and the release would
   * have left it free in the routed view (every other request waiting for it was dispatched there
   * and refused until the release expired: in the soak, nine refusals an iPad grant).
   */
  confirm(key: string, worker: string, spec: DeviceSpec, deviceId: string | undefined, at: number) {
    this.assumptions.set(key, { worker, spec, deviceId, confirmedAt: at });
    const released = this.released.get(worker);
    if (deviceId === undefined || !released) return;
    const still = released.filter((device) => device.deviceId !== deviceId);
    if (still.length > 0) this.released.set(worker, still);
    else this.released.delete(worker);
  }

  /** The dispatch came to nothing, or the request ended: it takes no room. */
  forget(key: string): void {
    this.assumptions.delete(key);
  }

  /** The agent let go of the device of a granted Lease: it is free before the view says so. */
  assumeReleased(worker: string, device: ReleasedDevice, at: number): void {
    const known = this.released.get(worker) ?? [];
    this.released.set(worker, [
      ...known.filter((entry) => entry.deviceId !== device.deviceId),
      { ...device, at },
    ]);
  }

  /**
   * The fleet routing walks: each view with the assumptions that still hold on it, and when the
   * first confirmed one expires (its worker may have room again then).
   */
  fleetAt(fleet: Fleet, now: number): { fleet: Fleet; nextExpiry: number | undefined } {
    const byName = new Map(fleet.views.map((view) => [view.name, view]));
    const pending = new Map<string, PendingDispatch[]>();
    // What each worker's adjustment is made of, as a short string: the same string, the same
    // adjusted view (a request's spec never changes, so its key stands for it).
    const signatures = new Map<string, string>();
    let nextExpiry = Number.POSITIVE_INFINITY;
    for (const [key, assumption] of this.assumptions) {
      const { worker, spec, deviceId, confirmedAt } = assumption;
      let dispatch: PendingDispatch | undefined;
      if (confirmedAt === undefined) dispatch = { spec };
      else {
        const until = confirmedAt + this.ttlMs;
        const view = byName.get(worker);
        if (until <= now) this.assumptions.delete(key);
        else if (view && !(deviceId && viewShowsLeased(view, deviceId))) {
          dispatch = { spec, deviceId };
          nextExpiry = Math.min(nextExpiry, until);
        }
      }
      if (!dispatch) continue;
      const list = pending.get(worker);
      if (list) list.push(dispatch);
      else pending.set(worker, [dispatch]);
      signatures.set(worker, `${signatures.get(worker) ?? ''}${key}:${dispatch.deviceId ?? ''};`);
    }
    const freed = new Map<string, ReleasedDevice[]>();
    for (const [worker, devices] of this.released) {
      const view = byName.get(worker);
      const current = devices.filter(
        (device) =>
          device.at + this.releasedTtlMs > now &&
          view !== undefined &&
          !viewShowsFreed(view, device.deviceId),
      );
      if (current.length === 0) this.released.delete(worker);
      else {
        this.released.set(worker, current);
        freed.set(
          worker,
          current.map(({ deviceId, physical }) => ({ deviceId, physical })),
        );
      }
    }
    const expiry = Number.isFinite(nextExpiry) ? nextExpiry : undefined;
    if (pending.size === 0 && freed.size === 0) {
      this.adjusted.clear();
      return { fleet, nextExpiry: expiry };
    }
    const views = fleet.views.map((view) => {
      const mine = pending.get(view.name) ?? [];
      const given = freed.get(view.name) ?? [];
      if (mine.length + given.length === 0) {
        this.adjusted.delete(view.name);
        return view;
      }
      // The same view and the same assumptions: the same object, so routing's memo holds.
      const signature = `${signatures.get(view.name) ?? ''}|${given
        .map((device) => `${device.deviceId}:${String(device.physical)}`)
        .join(';')}`;
      const known = this.adjusted.get(view.name);
      if (known && known.base === view && known.signature === signature) return known.view;
      const adjusted = assumeDispatches(view, mine, given);
      this.adjusted.set(view.name, { base: view, signature, view: adjusted });
      return adjusted;
    });
    return { fleet: { views, viewRevisions: fleet.viewRevisions }, nextExpiry: expiry };
  }
}
