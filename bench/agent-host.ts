// Many simlock agents in one process, for the benchmarks: each a ClusterAgent over its own
// AgentCore and FakeDriver, exactly the wiring of agent/main.ts without the exec and local HTTP
// servers (nothing execs in a benchmark). One process holds a thousand of them, which a thousand
// processes on two cores could not. They share one KubeClient (one connection pool, as one host's
// agents would not, but the API server sees the same requests).
//
// Driven over the fork IPC channel by bench/cluster.ts: `start` (the agents), `presence` (plug a
// physical device out or back in), `writes` (what the agents sent), `stop`.
import {
  AgentCore,
  ClusterAgent,
  FakeDriver,
  parseAgentConfig,
  type FakeScriptInput,
} from '../agent/index.js';
import { KubeClient, createLogger, systemClock } from '../runtime/index.js';

export interface HostedWorker {
  name: string;
  script: FakeScriptInput;
  /** Agent config fields over the host's (limits, probeIntervalMs, ...). */
  config?: Record<string, unknown>;
}

export type AgentHostCommand =
  | {
      kind: 'start';
      kubeconfigPath: string;
      systemNamespace: string;
      fleetLabel: string;
      workers: HostedWorker[];
      agentConfig: Record<string, unknown>;
    }
  | {
      kind: 'presence';
      worker: string;
      device: string;
      present: boolean;
    }
  | { kind: 'writes' }
  | { kind: 'stop' };

export type AgentHostReport =
  | { kind: 'started'; agents: number; ms: number }
  | { kind: 'writes'; byMethod: Record<string, number> }
  | { kind: 'failed'; message: string };

/** Agents started at once: a thousand registering together only queue at the API server. */
const START_CONCURRENCY = 50;

interface Hosted {
  agent: ClusterAgent;
  driver: FakeDriver;
  core: AgentCore;
}

const hosted = new Map<string, Hosted>();
const writesByMethod: Record<string, number> = {};

function report(message: AgentHostReport): void {
  process.send?.(message);
}

async function start(command: Extract<AgentHostCommand, { kind: 'start' }>): Promise<void> {
  const started = performance.now();
  const clock = systemClock();
  const log = createLogger({ component: 'agent-host' });
  const client = KubeClient.fromOptions({ kubeconfig: command.kubeconfigPath });
  client.observe((method) => {
    if (method !== 'GET') writesByMethod[method] = (writesByMethod[method] ?? 0) + 1;
  });
  let next = 0;
  const lane = async () => {
    while (next < command.workers.length) {
      const worker = command.workers[next++];
      if (!worker) return;
      const config = parseAgentConfig(
        {
          name: worker.name,
          labels: { 'simlock.dev/fleet': command.fleetLabel },
          namespace: command.systemNamespace,
          drivers: ['fake'],
          // Not read: the driver is built here from the script itself.
          fakeScript: `in-process:${worker.name}`,
          ...command.agentConfig,
          ...worker.config,
        },
        {},
        `agent ${worker.name}`,
      );
      const driver = new FakeDriver(worker.script, { clock });
      const core = new AgentCore({
        config,
        driver,
        clock,
        logger: log.child({ worker: worker.name }),
      });
      const agent = new ClusterAgent({
        client,
        core,
        config,
        clock,
        log: log.child({ worker: worker.name }),
      });
      await agent.start();
      hosted.set(worker.name, { agent, driver, core });
    }
  };
  await Promise.all(Array.from({ length: START_CONCURRENCY }, lane));
  report({ kind: 'started', agents: hosted.size, ms: performance.now() - started });
}

async function stop(): Promise<void> {
  await Promise.all([...hosted.values()].map(({ agent }) => agent.stop()));
  process.exit(0);
}

process.on('message', (command: AgentHostCommand) => {
  switch (command.kind) {
    case 'start':
      start(command).catch((error: unknown) =>
        report({ kind: 'failed', message: error instanceof Error ? error.message : String(error) }),
      );
      return;
    case 'presence': {
      const target = hosted.get(command.worker);
      target?.driver.setPresence(
        command.device,
        command.present ? { present: true } : { present: false, reason: 'not-present' },
      );
      return;
    }
    case 'writes':
      report({ kind: 'writes', byMethod: { ...writesByMethod } });
      return;
    case 'stop':
      void stop();
      return;
  }
});
// The parent going away ends the host (no orphaned agents renewing heartbeats).
process.on('disconnect', () => process.exit(0));
