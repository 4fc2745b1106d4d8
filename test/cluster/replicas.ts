// Controller replicas as real processes with leader election, restarted when they exit (as a
// Deployment would), for the reliability test and the soak benchmark: which one leads, killing the
// leader, and how long the next one takes to lead.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { freePort } from '../../tools/controlplane/start.js';
import { launchArgs } from '../launch.js';
import { eventually } from './harness.js';

export interface Replica {
  identity: string;
  port: number;
  child: ChildProcess;
  url: string;
  /** The V8 inspector's port on loopback, when the replicas run with `inspect`. */
  inspectorPort?: number;
}

export interface ReplicasOptions {
  kubeconfigPath: () => string;
  systemNamespace: string;
  watchNamespace: string;
  workerSelector: string;
  /** More flags for controller/main.ts (lease duration, timeouts). */
  extraArgs?: string[];
  /** Where the replicas' stderr goes (appended); dropped when absent. */
  logPath?: string;
  logLevel?: string;
  /** Each replica listens with the V8 inspector on a loopback port of its own (the soak's memory). */
  inspect?: boolean;
}

export class Replicas {
  readonly replicas: Replica[] = [];
  private stopped = false;
  private started = 0;
  kills = 0;

  constructor(private readonly options: ReplicasOptions) {}

  async start(count: number): Promise<void> {
    for (let index = 0; index < count; index++) this.replicas.push(await this.launch());
  }

  private async launch(): Promise<Replica> {
    const port = await freePort();
    const identity = `replica-${++this.started}`;
    const inspectorPort = this.options.inspect ? await freePort() : undefined;
    const child = spawn(
      process.execPath,
      [
        ...(inspectorPort ? [`--inspect=127.0.0.1:${inspectorPort}`] : []),
        ...launchArgs('controller'),
        '--kubeconfig',
        this.options.kubeconfigPath(),
        '--namespace',
        this.options.systemNamespace,
        '--watch-namespace',
        this.options.watchNamespace,
        '--worker-selector',
        this.options.workerSelector,
        '--listen',
        `127.0.0.1:${port}`,
        '--identity',
        identity,
        ...(this.options.extraArgs ?? []),
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, SIMLOCK_LOG_LEVEL: this.options.logLevel ?? 'error' },
      },
    );
    if (this.options.logPath)
      child.stderr?.pipe(createWriteStream(this.options.logPath, { flags: 'a' }));
    else child.stderr?.resume();
    const replica: Replica = {
      identity,
      port,
      child,
      url: `http://127.0.0.1:${port}`,
      ...(inspectorPort ? { inspectorPort } : {}),
    };
    // A replica that exits (killed, or it lost its lease while the API server was away) is
    // replaced, so as many keep running.
    child.once('exit', () => {
      if (this.stopped) return;
      const index = this.replicas.indexOf(replica);
      void this.launch().then((next) => {
        if (index >= 0) this.replicas[index] = next;
      });
    });
    return replica;
  }

  async leader(): Promise<Replica | undefined> {
    for (const replica of this.replicas) {
      try {
        const answer = await fetch(`${replica.url}/leader`);
        if (((await answer.json()) as { leader: boolean }).leader) return replica;
      } catch {
        // not listening (yet, or any more)
      }
    }
    return undefined;
  }

  /**
   * SIGKILLs the leader, once there is one; answers the one killed. A replica started a moment
   * ago on a loaded machine takes a while to start and win the election: up to a minute here.
   */
  async killLeader(timeoutMs = 60_000): Promise<Replica> {
    const leader = await eventually(() => this.leader(), { timeoutMs, what: 'a leader' });
    leader.child.kill('SIGKILL');
    this.kills++;
    return leader;
  }

  /** Waits for a leader other than `previous` (by identity); answers it. */
  newLeader(previous: Replica, timeoutMs = 60_000): Promise<Replica> {
    return eventually(
      async () => {
        const leader = await this.leader();
        return leader && leader.identity !== previous.identity ? leader : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `a leader after ${previous.identity}` },
    );
  }

  stop(): void {
    this.stopped = true;
    for (const replica of this.replicas) replica.child.kill('SIGKILL');
  }
}
