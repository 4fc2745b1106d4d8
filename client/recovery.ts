// A granted lease's device that crashed and is booted again by its agent under the same lease
// (api/device-recovery.ts), as its holder hears of it: one notice when it starts recovering (and
// again for each new crash), one when it is back. `RecoveryTracker` turns the versions of the
// request seen, in order, into those notices (pure; `lease --hold` feeds it from its polls);
// `watchRecovery` feeds it from a watch of the request (a held LeaseHandle's `onRecovery`, the
// MCP server's notifications).
import {
  DEVICE_RECOVERING,
  DEVICE_RECOVERY_EVENTS,
  LeaseRequestObject,
  type DeviceRecovery,
  type GrantedDevice,
} from '../api/index.js';
import {
  Informer,
  recoveredText,
  recoveringText,
  simlockPath,
  type KubeClient,
  type KubeObject,
} from '../runtime/index.js';

export interface DeviceRecoveryNotice {
  /** `recovering`: the device crashed and is booted again; `recovered`: it is back. */
  kind: 'recovering' | 'recovered';
  /** The Event reason the controller records for it: DeviceRecovering, DeviceRecovered. */
  reason: (typeof DEVICE_RECOVERY_EVENTS)[keyof typeof DEVICE_RECOVERY_EVENTS];
  /** The lease's name. */
  lease: string;
  device?: GrantedDevice | undefined;
  /** While recovering: since when, why, the crashes so far and the estimate. */
  recovery?: DeviceRecovery | undefined;
  /**
   * As people read it: "device iPhone 17 (…) crashed (shut down): booting it again, back in about
   * 40 s"; "device iPhone 17 (…) is back after its crash (shut down)".
   */
  text: string;
}

/** What a holder has been told of a lease's device, and what it is to be told next. */
export class RecoveryTracker {
  /** The recovery last told (its `since`), while one lasts. */
  private told: DeviceRecovery | undefined;
  /** When the condition last turned False, as first seen or told: an older end is not news. */
  private endedAt: string | undefined;
  private seenOnce = false;

  /** The notice a version of the request gives, if any: versions in the order they were seen. */
  see(request: LeaseRequestObject): DeviceRecoveryNotice | undefined {
    const status = request.status;
    const first = !this.seenOnce;
    this.seenOnce = true;
    if (status?.phase !== 'Granted') return undefined;
    const condition = status.conditions?.find((c) => c.type === DEVICE_RECOVERING);
    const lease = request.metadata.name;
    const device = status.device;
    const recovery = status.recovery;
    if (recovery !== undefined || condition?.status === 'True') {
      if (recovery === undefined || recovery.since === this.told?.since) return undefined;
      this.told = recovery;
      return {
        kind: 'recovering',
        reason: DEVICE_RECOVERY_EVENTS.recovering,
        lease,
        device,
        recovery,
        text: recoveringText(recovery, device),
      };
    }
    const cause = this.told?.cause;
    const wasTold = this.told !== undefined;
    this.told = undefined;
    if (condition?.status !== 'False' || condition.lastTransitionTime === this.endedAt)
      return undefined;
    this.endedAt = condition.lastTransitionTime;
    // A recovery that ended before the holder looked is no news; one it was not told of began
    // and ended between two looks, and is.
    if (first && !wasTold) return undefined;
    return {
      kind: 'recovered',
      reason: DEVICE_RECOVERY_EVENTS.recovered,
      lease,
      device,
      text: recoveredText(device, cause),
    };
  }
}

export interface WatchRecoveryOptions {
  onRecovery: (notice: DeviceRecoveryNotice) => void;
  /** How long one watch may stay open before it is reopened (below the request timeout). */
  watchSeconds?: number | undefined;
  onError?: ((error: unknown) => void) | undefined;
}

/**
 * Watches a granted request and tells each start and end of its device's recovery; answers the
 * stop (which ends the watch). A watch the server ends is reopened, a failed one retried.
 */
export function watchRecovery(
  client: KubeClient,
  namespace: string,
  name: string,
  options: WatchRecoveryOptions,
): () => Promise<void> {
  const tracker = new RecoveryTracker();
  const informer = new Informer(client, {
    path: simlockPath('leaseRequest', { namespace }),
    fieldSelector: `metadata.name=${name}`,
    watchTimeoutSeconds: options.watchSeconds ?? 60,
    initialBackoffMs: 250,
    maxBackoffMs: 5000,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  informer.on((event) => {
    if (event.type === 'deleted') return;
    const parsed = LeaseRequestObject.safeParse(event.object satisfies KubeObject);
    if (!parsed.success) return;
    const notice = tracker.see(parsed.data);
    if (notice) options.onRecovery(notice);
  });
  informer.start();
  let stopped: Promise<void> | undefined;
  return () => (stopped ??= informer.stop());
}
