// A holder's session (`lease --hold`, an MCP session, a client lease with `hold`): a
// coordination.k8s.io Lease in the request's
// namespace, renewed a few times per interval (like a node lease), never the LeaseRequest itself.
// The controller releases a request whose session it has not seen renewed for one interval
// (HolderGone; ADR 0008), so a holder killed with SIGKILL lets its device go within the interval.
import { randomBytes } from 'node:crypto';
import { HOLDER_SESSION_LABEL } from '../api/index.js';
import {
  coordinationLease,
  coordinationLeasePath,
  isNotFound,
  type KubeClient,
} from '../runtime/index.js';

/** Renewals per interval: one missed or slow renewal does not lose the lease. */
const RENEWALS_PER_INTERVAL = 3;

export class HolderSession {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    private readonly client: KubeClient,
    readonly namespace: string,
    readonly name: string,
    readonly renewSeconds: number,
    private readonly onError: (message: string) => void,
  ) {}

  static async start(
    client: KubeClient,
    namespace: string,
    renewSeconds: number,
    onError: (message: string) => void,
    identity = `kubectl-simlock-${process.pid}`,
  ): Promise<HolderSession> {
    const name = `simlock-holder-${randomBytes(5).toString('hex')}`;
    await client.create(
      coordinationLeasePath(namespace),
      coordinationLease(
        { name, labels: { [HOLDER_SESSION_LABEL]: 'true' } },
        { holderIdentity: identity, leaseDurationSeconds: renewSeconds, renewTime: microTime() },
      ),
    );
    const session = new HolderSession(client, namespace, name, renewSeconds, onError);
    session.schedule();
    return session;
  }

  /** Stops renewing and deletes the session. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.client
      .delete(coordinationLeasePath(this.namespace, this.name))
      .catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => void this.renew().finally(() => this.schedule()),
      (this.renewSeconds * 1000) / RENEWALS_PER_INTERVAL,
    );
  }

  private async renew(): Promise<void> {
    try {
      await this.client.patch(coordinationLeasePath(this.namespace, this.name), {
        spec: { renewTime: microTime() },
      });
    } catch (error) {
      if (this.stopped) return;
      if (isNotFound(error)) this.onError(`holder session ${this.name} was deleted`);
      else this.onError(`could not renew holder session ${this.name}: ${String(error)}`);
    }
  }
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
