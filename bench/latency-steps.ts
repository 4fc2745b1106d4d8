// Where a grant's time goes, for bench/latency.ts: when this program's own watch first saw each
// request's Lease (the controller's dispatch) and that Lease Granted (the agent's answer), by the
// request's name (spec.request). With the request's create call and its Granted status, the grant
// splits into three steps: the controller's dispatch, the agent's answer, the controller's status.
import { WORKER_LABEL } from '../api/index.js';
import { Informer, simlockPath, type KubeClient } from '../runtime/index.js';

export interface GrantSteps {
  /** The create call, sent → answered: one write of the request, as the client sees it. */
  createMs: number;
  /** Create call answered → the Lease seen: the request's watch event, the walk, the Lease create. */
  dispatchMs: number;
  /** The Lease seen → its status Granted seen: the agent's watch event and its status write. */
  agentMs: number;
  /** The Lease Granted seen → the request Granted seen: the controller's status write. */
  statusMs: number;
}

export class LeaseSteps {
  private readonly created = new Map<string, number>();
  private readonly granted = new Map<string, number>();
  private readonly informer: Informer;
  /** When each Worker status change was seen: the agents' views, written beside the samples. */
  private readonly viewsSeen: number[] = [];
  private readonly workers: Informer;

  constructor(admin: KubeClient) {
    this.informer = new Informer(admin, {
      path: simlockPath('lease'),
      labelSelector: WORKER_LABEL,
    });
    this.informer.on((event) => {
      if (event.type === 'deleted') return;
      const request = (event.object.spec as { request?: { name?: string } } | undefined)?.request
        ?.name;
      if (request === undefined) return;
      const now = performance.now();
      if (!this.created.has(request)) this.created.set(request, now);
      const phase = (event.object.status as { phase?: string } | undefined)?.phase;
      if (phase === 'Granted' && !this.granted.has(request)) this.granted.set(request, now);
    });
    this.workers = new Informer(admin, { path: simlockPath('worker') });
    this.workers.on((event) => {
      if (event.type === 'updated') this.viewsSeen.push(performance.now());
    });
  }

  async start(): Promise<void> {
    this.informer.start();
    this.workers.start();
    await Promise.all([this.informer.waitForSync(), this.workers.waitForSync()]);
  }

  /** When Worker changes were seen from `from` on (performance.now()), in ms after it. */
  viewsSince(from: number): number[] {
    return this.viewsSeen.filter((at) => at >= from).map((at) => Math.round(at - from));
  }

  /**
   * The steps of `request`, its create call sent at `sentAt` and answered at `answeredAt`, seen
   * Granted at `grantedAt` (all performance.now()).
   */
  of(
    request: string,
    times: { sentAt: number; answeredAt: number; grantedAt: number },
  ): GrantSteps | undefined {
    const { sentAt, answeredAt, grantedAt } = times;
    const created = this.created.get(request);
    const granted = this.granted.get(request);
    if (created === undefined || granted === undefined) return undefined;
    return {
      createMs: answeredAt - sentAt,
      dispatchMs: created - answeredAt,
      agentMs: granted - created,
      statusMs: grantedAt - granted,
    };
  }

  async stop(): Promise<void> {
    await Promise.all([this.informer.stop(), this.workers.stop()]);
  }
}
