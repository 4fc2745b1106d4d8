// A granted lease, as lease() answers it: the device, and what can be done with it.
import {
  ExecTool,
  SimlockError,
  type GrantedDevice,
  type LeaseRequestObject,
} from '../api/index.js';
import type { KubeClient } from '../runtime/index.js';
import { execOnLease, screenshotOfLease, type ExecOptions, type ProxyAccess } from './exec.js';
import { extendLease, type ExtendBy, type Extended } from './extend.js';
import type { HolderSession } from './holder-session.js';
import { watchRecovery, type DeviceRecoveryNotice } from './recovery.js';
import { releaseLease, type ReleaseOptions, type Released } from './release.js';

export class LeaseHandle {
  /** The lease's name (its LeaseRequest's and its Lease's). */
  readonly name: string;
  readonly namespace: string;
  readonly device: GrantedDevice | undefined;
  /** The worker's name. */
  readonly worker: string | undefined;
  /** When it ends unless extended (RFC 3339); extend() moves it. */
  expiresAt: string | undefined;
  /** The recovery watches started by onRecovery, stopped on release. */
  private readonly recoveryWatches = new Set<() => Promise<void>>();

  constructor(
    readonly request: LeaseRequestObject,
    private readonly client: KubeClient,
    private readonly proxy: ProxyAccess,
    /** A session this handle started (lease with `hold`): stopped on release. */
    private readonly ownSession?: HolderSession,
  ) {
    this.name = request.metadata.name;
    this.namespace = request.metadata.namespace ?? '';
    this.device = request.status?.device;
    this.worker = request.status?.worker;
    this.expiresAt = request.status?.expiresAt;
  }

  /** Runs `tool args` on the device through the exec proxy; answers the tool's exit code. */
  exec(tool: ExecTool, args: readonly string[] = [], options: ExecOptions = {}): Promise<number> {
    const parsed = ExecTool.safeParse(tool);
    if (!parsed.success) {
      return Promise.reject(
        new SimlockError('USAGE', `tool: must be simctl, devicectl or adb (got ${String(tool)})`, {
          field: 'tool',
        }),
      );
    }
    return execOnLease(this.proxy, this.namespace, this.name, parsed.data, args, options);
  }

  /** A PNG of the device's screen (simulators and Android devices; not a physical iPhone). */
  screenshot(): Promise<Uint8Array> {
    return screenshotOfLease(this.client, this.proxy, this.namespace, this.name);
  }

  /** Makes it last longer: `{ bySeconds: 1800 }` from the current expiry, or `{ until }`. */
  async extend(by: ExtendBy = { bySeconds: 3600 }): Promise<Extended> {
    const extended = await extendLease(this.client, this.namespace, this.name, by);
    this.expiresAt = extended.expiresAt;
    return extended;
  }

  /**
   * Calls `listener` when the device crashes and its agent boots it again under this lease
   * (`recovering`, with the cause and the estimate; again for each new crash), and when it is back
   * (`recovered`). Execs meanwhile fail UNAVAILABLE; past the crash budget the lease ends
   * LEASE_LOST. Answers the stop; release() stops it too.
   */
  onRecovery(
    listener: (notice: DeviceRecoveryNotice) => void,
    options: { watchSeconds?: number } = {},
  ): () => Promise<void> {
    const stopWatch = watchRecovery(this.client, this.namespace, this.name, {
      onRecovery: listener,
      // Below the client's default request timeout (30 s), which would cut a longer watch.
      watchSeconds: options.watchSeconds ?? 25,
    });
    const stop = () => {
      this.recoveryWatches.delete(stop);
      return stopWatch();
    };
    this.recoveryWatches.add(stop);
    return stop;
  }

  /** Lets it go, and by default waits until the agent has reclaimed the device. */
  async release(options: ReleaseOptions = {}): Promise<Released> {
    try {
      await Promise.all([...this.recoveryWatches].map((stop) => stop()));
      return await releaseLease(this.client, this.namespace, this.name, options);
    } finally {
      await this.ownSession?.stop();
    }
  }
}
