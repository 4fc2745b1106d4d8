// The soak's faults, on three lanes: (1) one at a time, the leader SIGKILLed every ~2 minutes,
// etcd restarted once and kube-apiserver once, none of them while an agent is cut off (a
// failover's own pause would blur what the partition measures); (2) an agent SIGKILLed and started
// again every ~3 minutes; (3) an agent cut off from the API server for a minute, several times.
// After each fault the waiting reasons must converge to the truth; around each partition the
// cut-off worker must read disconnected in time, and reconcile when it comes back.
import type { Replicas } from '../../test/index.js';
import type { ControlPlane } from '../../tools/index.js';
import { log } from '../harness/index.js';
import { HEARTBEAT_SECONDS, agentName, type SoakAgent } from './fleet.js';
import { HarnessError, type HarnessWrites } from './harness-writes.js';
import type { SoakLoad } from './load.js';
import type { SoakWatch } from './watch.js';

export const FAULT_KINDS = ['leader', 'agent', 'partition', 'etcd', 'apiserver'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** `--faults`: the kinds named, each one known. */
export function faultKinds(names: string[]): Set<FaultKind> {
  // `--faults none`: the load alone (what the system does when nothing breaks).
  if (names.length === 1 && names[0] === 'none') return new Set();
  const known: readonly string[] = FAULT_KINDS;
  for (const name of names)
    if (!known.includes(name))
      throw new Error(`--faults: unknown fault ${name}; known: ${FAULT_KINDS.join(',')}`);
  return new Set(names as FaultKind[]);
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'];

/** `--log-level`: one the processes know. */
export function logLevel(name: string): string {
  if (!LOG_LEVELS.includes(name))
    throw new Error(`--log-level: unknown level ${name}; known: ${LOG_LEVELS.join(',')}`);
  return name;
}

export interface FaultWindow {
  kind: FaultKind;
  start: number;
  end: number;
}

export interface PartitionResult {
  worker: string;
  cutAt: number;
  healedAt: number;
  /** From the cut to `disconnected` in a waiting request's reasons. */
  detectedMs?: number;
  /** The pinned Lease released while away was reclaimed after the return; the held one kept. */
  reclaimed?: boolean;
  kept?: boolean;
  problems: string[];
}

export interface Convergence {
  after: string;
  ms?: number;
  problem?: string;
}

/** Connectivity reasons: after a fault is over, no worker still up may give one. */
const AWAY = ['disconnected', 'not-ready', 'unhealthy', 'incompatible'];

/** The pinned requests of a partition are made this long before its cut, to be granted by then. */
const PINNED_LEAD_MS = 90_000;

const sleepUntil = (at: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));

export class SoakFaults {
  readonly windows: FaultWindow[] = [];
  readonly failoversMs: number[] = [];
  readonly agentRestartsMs: number[] = [];
  /** etcd or kube-apiserver restarted: from the stop to kube-apiserver ready again. */
  readonly restarts: { kind: 'etcd' | 'apiserver'; ms: number }[] = [];
  readonly partitions: PartitionResult[] = [];
  readonly convergence: Convergence[] = [];
  readonly errors: string[] = [];
  /** Workers killed or cut off right now: no reason is expected of them. */
  private readonly down = new Set<string>();

  constructor(
    private readonly context: {
      controlPlane: ControlPlane;
      replicas: Replicas;
      agents: SoakAgent[];
      watch: SoakWatch;
      load: SoakLoad;
      /** The harness's own failures (a fault it could not make) are recorded there, apart. */
      harness: HarnessWrites;
      /** Left alone: its memory is measured from start to end. */
      measured: SoakAgent;
    },
  ) {}

  /**
   * Runs every lane over `durationMs` from `started`; resolves when all are done. Only the kinds
   * of fault named run; etcd is restarted `etcdRestarts` times, spread over the run.
   */
  async run(
    started: number,
    durationMs: number,
    partitionMs: number,
    only: { kinds: Set<FaultKind>; etcdRestarts: number },
  ): Promise<void> {
    const count = only.kinds.has('partition') ? Math.max(1, Math.round(durationMs / 420_000)) : 0;
    const cuts = Array.from(
      { length: count },
      (_, k) => started + (durationMs * (k + 0.6)) / count,
    );
    const exclusive: { at: number; kind: 'leader' | 'etcd' | 'apiserver' }[] = [];
    if (only.kinds.has('leader'))
      for (let at = started + 60_000; at < started + durationMs - 30_000; at += 120_000)
        exclusive.push({ at, kind: 'leader' });
    if (only.kinds.has('etcd'))
      for (let k = 0; k < only.etcdRestarts; k++)
        exclusive.push({
          at: started + (durationMs * (0.35 + k)) / Math.max(1, only.etcdRestarts),
          kind: 'etcd',
        });
    if (only.kinds.has('apiserver'))
      exclusive.push({ at: started + durationMs * 0.8, kind: 'apiserver' });
    for (const fault of exclusive) {
      // Moved to just after the partition whose window it falls in: from the making of its pinned
      // requests (PINNED_LEAD_MS before the cut) to 20 s after it heals. An etcd restart as the
      // pinned requests were made left their one worker looking away (its heartbeat could not be
      // renewed): they failed at once (NO_CAPACITY), and the partition was not judged.
      const cut = cuts.find(
        (at) => fault.at > at - PINNED_LEAD_MS - 15_000 && fault.at < at + partitionMs + 20_000,
      );
      if (cut !== undefined) fault.at = cut + partitionMs + 20_000;
    }
    exclusive.sort((a, b) => a.at - b.at);
    const agentKills: number[] = [];
    if (only.kinds.has('agent'))
      for (let at = started + 90_000; at < started + durationMs - 20_000; at += 180_000)
        agentKills.push(at);
    await Promise.all([
      this.lane('exclusive', async () => {
        for (const fault of exclusive) {
          await sleepUntil(fault.at);
          await this.exclusive(fault.kind);
        }
      }),
      this.lane('agents', async () => {
        for (const at of agentKills) {
          await sleepUntil(at);
          await this.killAgent();
        }
      }),
      this.lane('partitions', async () => {
        for (const [index, cut] of cuts.entries()) await this.partition(index, cut, partitionMs);
      }),
    ]);
  }

  private async lane(name: string, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      // One of the harness's own (recorded in HarnessWrites.failures) is not the product's.
      if (!(error instanceof HarnessError))
        this.errors.push(`${name}: ${(error as Error).message}`);
      log(`fault lane ${name} stopped: ${(error as Error).message}`);
    }
  }

  private async exclusive(kind: 'leader' | 'etcd' | 'apiserver'): Promise<void> {
    const start = Date.now();
    if (kind === 'leader') {
      const killed = await this.context.replicas.killLeader(60_000);
      const next = await this.context.replicas.newLeader(killed, 120_000);
      this.failoversMs.push(Date.now() - start);
      log(
        `leader ${killed.identity} killed; ${next.identity} leads after ${Date.now() - start} ms`,
      );
    } else if (kind === 'etcd') {
      await this.harnessStep('restart etcd', () => this.context.controlPlane.restartEtcd());
      this.restarts.push({ kind, ms: Date.now() - start });
      log(`etcd restarted in ${Date.now() - start} ms`);
    } else {
      await this.harnessStep('restart kube-apiserver', () =>
        this.context.controlPlane.restartApiServer(),
      );
      this.restarts.push({ kind, ms: Date.now() - start });
      log(`kube-apiserver restarted in ${Date.now() - start} ms`);
    }
    this.windows.push({ kind, start, end: Date.now() });
    await this.converge(`${kind} ${new Date(start).toISOString().slice(11, 19)}`);
  }

  private agentKills = 0;

  private async killAgent(): Promise<void> {
    const candidates = this.context.agents.filter(
      (agent) => !agent.partition && agent !== this.context.measured,
    );
    const agent = candidates[(this.agentKills++ * 7) % candidates.length];
    if (!agent) return;
    const start = Date.now();
    this.down.add(agent.process.name);
    await agent.process.restart('SIGKILL');
    this.down.delete(agent.process.name);
    this.agentRestartsMs.push(Date.now() - start);
    this.windows.push({ kind: 'agent', start, end: Date.now() });
    log(`agent ${agent.process.name} killed and running again after ${Date.now() - start} ms`);
    await this.converge(`agent ${agent.process.name} restart`);
  }

  /**
   * Two requests pinned to the agent are granted first; it is cut off; one is released while it
   * is away; it comes back: the released one must be reclaimed and the held one kept. The pinned
   * requests are the harness's own writes (tried until they succeed): one given up is the
   * harness's failure (HarnessWrites.failures), and the check that needed it is not made.
   */
  private async partition(index: number, cutAt: number, partitionMs: number): Promise<void> {
    const cutOff = this.context.agents.filter((agent) => agent.partition)[index % 2];
    if (!cutOff?.partition) return;
    const { watch, load } = this.context;
    const worker = cutOff.process.name;
    const keep = `keep-${index}`;
    const drop = `drop-${index}`;
    await sleepUntil(cutAt - PINNED_LEAD_MS);
    try {
      await load.createPinned(keep, cutOff.partition.capability);
      await load.createPinned(drop, cutOff.partition.capability);
    } catch (error) {
      if (!(error instanceof HarnessError)) throw error;
      log(`partition ${index} of ${worker} not made: its pinned requests could not be created`);
      await this.release(keep, drop);
      return;
    }
    const result: PartitionResult = { worker, cutAt, healedAt: 0, problems: [] };
    this.partitions.push(result);
    const pinnedGranted = await this.until(80_000, () =>
      [keep, drop].every((name) => watch.status(name)?.phase === 'Granted'),
    );
    if (!pinnedGranted)
      result.problems.push(
        `the pinned requests were not granted before the cut: ${keep} ${watch.status(keep)?.phase}, ${drop} ${watch.status(drop)?.phase}`,
      );
    const keepLease = [...watch.record(keep).grantedLeases][0];
    await sleepUntil(cutAt);
    const network = cutOff.partition.network;
    await this.harnessStep(`cut ${worker} off`, () => network.cut());
    result.cutAt = Date.now();
    this.down.add(worker);
    log(`agent ${worker} cut off`);
    // Only statuses written after the cut count: one written before may be stale.
    const detected = this.until(partitionMs, () =>
      watch.waiting(result.cutAt).some((entry) => entry.reasons.get(worker) === 'disconnected'),
    ).then((seen) => {
      if (seen) result.detectedMs = Date.now() - result.cutAt;
    });
    await sleepUntil(result.cutAt + 2000);
    // Released while it is away: the controller lets the Lease go; the agent cannot see it yet.
    // Tried until the partition ends: a release that came after would test something else.
    const released = await load
      .delete(drop, result.cutAt + partitionMs - Date.now())
      .then(() => true, givenUp);
    await sleepUntil(result.cutAt + partitionMs);
    await detected;
    await this.harnessStep(`heal ${worker}'s network`, () => network.heal());
    result.healedAt = Date.now();
    this.windows.push({ kind: 'partition', start: result.cutAt, end: result.healedAt });
    log(`agent ${worker} back after ${result.healedAt - result.cutAt} ms`);
    if (result.detectedMs === undefined || result.detectedMs > HEARTBEAT_SECONDS * 1000 + 1000)
      result.problems.push(
        `disconnected ${result.detectedMs === undefined ? 'never' : `after ${result.detectedMs} ms`} (bound ${HEARTBEAT_SECONDS * 1000 + 1000} ms)`,
      );
    if (pinnedGranted && released) {
      result.reclaimed = await this.until(
        60_000,
        () => watch.requests.get(`soak/${drop}`) === undefined && watch.leaseOf(drop) === undefined,
      );
      if (!result.reclaimed) result.problems.push(`${drop}'s Lease not reclaimed within 60 s`);
    }
    if (pinnedGranted) {
      // Held across the partition: still Granted under the same Lease, a while after the return.
      await sleepUntil(Date.now() + 10_000);
      const lease = watch.leaseOf(keep);
      const uid = lease ? String(lease.metadata.uid) : 'gone';
      result.kept =
        watch.status(keep)?.phase === 'Granted' &&
        uid === keepLease &&
        !lease?.metadata.deletionTimestamp;
      if (!result.kept)
        result.problems.push(
          `${keep} not kept: ${watch.status(keep)?.phase}, Lease ${uid} (was ${keepLease})`,
        );
    }
    this.down.delete(worker);
    await this.release(keep, drop);
    await this.converge(`partition of ${worker}`);
  }

  /**
   * A step of the harness's own: the control plane (not the product) back after its restart, a
   * network namespace cut or healed. One that fails is the harness's failure; its lane stops.
   */
  private async harnessStep(what: string, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      throw this.context.harness.failed(what, error);
    }
  }

  /** The pinned requests let go, each delete tried until it succeeds or the harness gives it up. */
  private async release(...names: string[]): Promise<void> {
    for (const name of names) await this.context.load.delete(name).catch(givenUp);
  }

  /**
   * The truth, after a fault: every worker that is up gives a reason other than a connectivity
   * one; a worker without iPads says it does not offer the model. Checked on the waiting iPad
   * requests until one agrees (60 s).
   */
  private async converge(after: string): Promise<void> {
    const start = Date.now();
    let last = 'no waiting request with reasons';
    const agreed = await this.until(60_000, () => {
      for (const { name, reasons } of this.context.watch.waiting(start)) {
        if (name.startsWith('keep-') || name.startsWith('drop-')) continue;
        const wrong: string[] = [];
        for (const agent of this.context.agents) {
          const worker = agentName(agent.index);
          // Down, or its heartbeat lapsed right now (a machine too loaded to renew in time):
          // `disconnected` is then the truth, so nothing is expected of it.
          if (this.down.has(worker) || this.context.watch.lapsed(worker)) continue;
          const reason = reasons.get(worker) ?? 'missing';
          const right = agent.ipad
            ? !AWAY.includes(reason.split('/')[0] ?? '')
            : reason === 'unknown-model';
          if (!right) wrong.push(`${worker}: ${reason}`);
        }
        if (wrong.length === 0) return true;
        last = `${name}: ${wrong.slice(0, 6).join(', ')}`;
      }
      return false;
    });
    this.convergence.push(
      agreed ? { after, ms: Date.now() - start } : { after, problem: `not within 60 s: ${last}` },
    );
    if (!agreed) log(`reasons did not converge after ${after}: ${last}`);
  }

  private async until(timeoutMs: number, check: () => boolean): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (check()) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return check();
  }
}

/**
 * A write the harness gave up: recorded in HarnessWrites.failures already, so the check that
 * needed it is skipped (false). Anything else is a fault of the soak's own code: thrown on.
 */
function givenUp(error: unknown): false {
  if (!(error instanceof HarnessError)) throw error;
  return false;
}
