// One MCP session's leases. Each names the session's holder session (a coordination.k8s.io Lease
// renewed while the server lives; client/holder-session.ts), so a server killed with SIGKILL lets
// them go within one renewal interval (HolderGone, ADR 0008); a server whose client hangs up
// (stdin closes) releases them at once. The session acts only on its own leases, and hears when
// the device of one crashes and is booted again under it (`onRecovery`: the server notifies).
import { SimlockError } from '../../api/index.js';
import {
  HolderSession,
  type DeviceRecoveryNotice,
  type LeaseHandle,
  type LeaseProgress,
  type LeaseSpecInput,
  type SimlockClient,
} from '../../client/index.js';

export class McpSession {
  private readonly leases = new Map<string, LeaseHandle>();
  /** lease() calls still waiting: close waits for their withdrawal. */
  private readonly waiting = new Set<Promise<unknown>>();
  /** Aborted on close: leases still waiting are withdrawn. */
  private readonly closing = new AbortController();
  private closed: Promise<void> | undefined;
  /** Told when the device of a lease of the session crashes and when it is back (server.ts). */
  onRecovery: (notice: DeviceRecoveryNotice) => void = () => undefined;

  private constructor(
    readonly client: SimlockClient,
    readonly holder: HolderSession,
  ) {}

  static async start(
    client: SimlockClient,
    renewSeconds: number,
    warn: (message: string) => void,
  ): Promise<McpSession> {
    const holder = await HolderSession.start(
      client.kube,
      client.namespace,
      renewSeconds,
      warn,
      `kubectl-simlock-mcp-${process.pid}`,
    );
    return new McpSession(client, holder);
  }

  get namespace(): string {
    return this.client.namespace;
  }

  /** Leases this session holds, by name. */
  names(): string[] {
    return [...this.leases.keys()].sort();
  }

  async lease(
    spec: LeaseSpecInput,
    options: { signal: AbortSignal; onProgress: (progress: LeaseProgress) => void },
  ): Promise<LeaseHandle> {
    if (this.closing.signal.aborted)
      throw new SimlockError('UNAVAILABLE', 'the session is closing');
    const leasing = this.client.lease(spec, {
      signal: AbortSignal.any([options.signal, this.closing.signal]),
      onProgress: options.onProgress,
      hold: { session: this.holder },
      // Watched until released (the handle stops it): the server tells the client.
      onRecovery: (notice) => this.onRecovery(notice),
    });
    this.waiting.add(leasing);
    let handle: LeaseHandle;
    try {
      handle = await leasing;
    } finally {
      this.waiting.delete(leasing);
    }
    this.leases.set(handle.name, handle);
    // Granted as the session closed: it goes with the others.
    if (this.closing.signal.aborted) await this.release(handle.name);
    return handle;
  }

  /** The session's lease `name`, or its only one when no name is given. */
  own(name: string | undefined): LeaseHandle {
    if (name === undefined) {
      const [only, ...others] = this.leases.values();
      if (only && others.length === 0) return only;
      throw new SimlockError(
        'USAGE',
        only
          ? `lease: this session holds ${this.leases.size} leases (${this.names().join(', ')}); name one`
          : 'lease: this session holds no lease; call lease first',
        { field: 'lease' },
      );
    }
    const handle = this.leases.get(name);
    if (!handle) {
      throw new SimlockError(
        'NOT_FOUND',
        `lease "${name}" is not one of this session's leases (${this.names().join(', ') || 'none'})`,
        { field: 'lease', name },
      );
    }
    return handle;
  }

  async release(name: string | undefined): Promise<{ name: string; granted: boolean }> {
    const handle = this.own(name);
    const { granted } = await handle.release();
    this.leases.delete(handle.name);
    return { name: handle.name, granted };
  }

  /**
   * The client hung up: withdraw what waits, delete every request (the controller releases each
   * lease; nothing waits for the agents' reclaim), stop renewing. Idempotent.
   */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing.abort();
      await Promise.all([...this.waiting].map((leasing) => leasing.catch(() => undefined)));
      await Promise.all(
        [...this.leases.values()].map((handle) =>
          handle.release({ wait: false }).catch(() => undefined),
        ),
      );
      this.leases.clear();
      await this.holder.stop();
    })();
    return this.closed;
  }
}
