// Real agent processes with the fake driver, for cluster and end-to-end tests: each gets a script
// file (editable while it runs: the fake driver reads it again) and a config file.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { WorkerObject, heartbeatLeaseName, type WorkerStatus } from '../../api/index.js';
import { coordinationLeasePath, simlockPath, type KubeClient } from '../../runtime/index.js';
import { freePort } from '../../tools/controlplane/start.js';
import { launchArgs } from '../launch.js';
import { FLEET_LABEL } from './fleet.js';
import { eventually } from './harness.js';

/** A fake-driver script: devices, models, runtimes (see agent/drivers/fake/fake-script.ts). */
export type FakeScriptInput = Record<string, unknown>;

/** iOS simulators (iPhone 16, iPad Pro on 18.4) and nothing else. */
export function iosSimulatorScript(extra: FakeScriptInput = {}): FakeScriptInput {
  return {
    models: [
      { name: 'iPhone 16', platform: 'ios', class: 'phone' },
      { name: 'iPad Pro', platform: 'ios', class: 'tablet' },
    ],
    runtimes: [{ platform: 'ios', version: '18.4' }],
    devices: [
      { id: 'sim-iphone-1', name: 'iPhone 16', model: 'iPhone 16', platform: 'ios', os: '18.4' },
      {
        id: 'sim-iphone-2',
        name: 'iPhone 16 (2)',
        model: 'iPhone 16',
        platform: 'ios',
        os: '18.4',
      },
    ],
    bootMs: 50,
    ...extra,
  };
}

export interface AgentProcess {
  name: string;
  child: ChildProcess;
  scriptPath: string;
  localPort: number;
  /** Rewrites the fake driver's script; the agent reads it at its next listing or presence read. */
  setScript(script: FakeScriptInput): Promise<void>;
  status(): Promise<WorkerStatus | undefined>;
  /** Stops the process for good (SIGTERM by default) and removes its config folder. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Stops the process (SIGKILL by default) and starts it again with the same config. */
  restart(signal?: NodeJS.Signals): Promise<void>;
  output(): string;
}

export interface StartAgentOptions {
  admin: KubeClient;
  kubeconfigPath: string;
  /** The Worker name (cluster-wide) and the namespace of its heartbeat. */
  name: string;
  namespace: string;
  /** The fleet label value a controller selects (TestFleet.namespace). */
  fleet: string;
  script: FakeScriptInput;
  label?: string;
  config?: Record<string, unknown>;
  /** Identities allowed to call exec (the proxy's). */
  execAllowedIdentities?: string[];
  /** A command the agent runs under, e.g. `ip netns exec NAME` (test/cluster/partition.ts). */
  commandPrefix?: string[];
  /** How long it may take to report `running` (default 45 s). */
  runningTimeoutMs?: number;
  /** A file its log is appended to (every life of the process), beside the last 20 KB kept. */
  logPath?: string;
  /** SIMLOCK_LOG_LEVEL of the process (default: this process's, else warn). */
  logLevel?: string;
  /** Flags for node itself, before the launcher (e.g. `--inspect=127.0.0.1:PORT`). */
  nodeArguments?: readonly string[];
  /** The process's environment over this one's (a PATH with stand-in device tools first). */
  env?: NodeJS.ProcessEnv;
}

/**
 * A real agent as worker `a` (label wrk_a) of a TestFleet, in the fleet's namespace: how the
 * agent's own stories start.
 */
export function startFleetAgent(
  cluster: { admin: KubeClient; kubeconfigPath: string },
  fleet: { namespace: string; name(short: string): string },
  script: FakeScriptInput,
  config: Record<string, unknown> = {},
  extra: Partial<StartAgentOptions> = {},
): Promise<AgentProcess> {
  return startAgent({
    ...extra,
    admin: cluster.admin,
    kubeconfigPath: cluster.kubeconfigPath,
    name: fleet.name('a'),
    label: 'wrk_a',
    namespace: fleet.namespace,
    fleet: fleet.namespace,
    script,
    config,
  });
}

export async function startAgent(options: StartAgentOptions): Promise<AgentProcess> {
  const dir = await mkdtemp(join(tmpdir(), `simlock-agent-${options.name}-`));
  const scriptPath = join(dir, 'script.yaml');
  const configPath = join(dir, 'agent.yaml');
  await writeFile(scriptPath, stringify(options.script));
  const localPort = await freePort();
  await writeFile(
    configPath,
    stringify({
      name: options.name,
      ...(options.label ? { label: options.label } : {}),
      labels: { [FLEET_LABEL]: options.fleet },
      namespace: options.namespace,
      drivers: ['fake'],
      fakeScript: scriptPath,
      dataDir: join(dir, 'data'),
      limits: { running: 4, platforms: { ios: { running: 2 }, android: { running: 2 } } },
      probeIntervalMs: 200,
      refreshIntervalMs: 500,
      healthIntervalMs: 1000,
      viewDebounceMs: 50,
      heartbeat: { durationSeconds: 5, renewEverySeconds: 1 },
      listen: { host: '127.0.0.1', port: 0 },
      local: { host: '127.0.0.1', port: localPort },
      ...(options.execAllowedIdentities
        ? { execAllowedIdentities: options.execAllowedIdentities }
        : {}),
      ...options.config,
    }),
  );
  let output = '';
  const launch = (): ChildProcess => {
    const [command = process.execPath, ...prefixArguments] = [
      ...(options.commandPrefix ?? []),
      process.execPath,
    ];
    const started = spawn(
      command,
      [
        ...prefixArguments,
        ...(options.nodeArguments ?? []),
        ...launchArgs('agent'),
        '--config',
        configPath,
        '--kubeconfig',
        options.kubeconfigPath,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: {
          ...process.env,
          ...options.env,
          SIMLOCK_LOG_LEVEL: options.logLevel ?? process.env.SIMLOCK_LOG_LEVEL ?? 'warn',
        },
      },
    );
    if (options.logPath) started.stderr?.pipe(createWriteStream(options.logPath, { flags: 'a' }));
    started.stderr?.setEncoding('utf8');
    started.stderr?.on('data', (chunk: string) => {
      output = (output + chunk).slice(-20_000);
    });
    return started;
  };
  const status = async (): Promise<WorkerStatus | undefined> => {
    try {
      const worker = WorkerObject.safeParse(
        await options.admin.get(simlockPath('worker', { name: options.name })),
      );
      return worker.success ? worker.data.status : undefined;
    } catch {
      return undefined;
    }
  };
  /** When this process renewed its heartbeat last (0 if never): it starts once registered. */
  const renewedAt = async (): Promise<number> => {
    try {
      const lease = (await options.admin.get(
        coordinationLeasePath(options.namespace, heartbeatLeaseName(options.name)),
      )) as { spec?: { renewTime?: string } };
      return Date.parse(lease.spec?.renewTime ?? '') || 0;
    } catch {
      return 0;
    }
  };
  /** The process has registered and reports itself running (a restarted one: since `since`). */
  const running = async (child: ChildProcess, since = 0): Promise<void> => {
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`agent ${options.name} exited: ${output}`);
        const current = await status();
        // The Worker keeps the status of a process before a restart: the heartbeat tells them apart.
        if (since > 0 && (await renewedAt()) < since) return undefined;
        return current?.health === 'running' && current.catalog ? current : undefined;
      },
      { timeoutMs: options.runningTimeoutMs ?? 45_000, what: `agent ${options.name} running` },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\n${output}`);
    });
  };
  const stop = (child: ChildProcess, signal: NodeJS.Signals): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  const agent: AgentProcess = {
    name: options.name,
    child: launch(),
    scriptPath,
    localPort,
    setScript: async (script) => {
      // Write beside and rename, so the agent never reads half a file.
      await writeFile(`${scriptPath}.next`, stringify(script));
      const { rename } = await import('node:fs/promises');
      await rename(`${scriptPath}.next`, scriptPath);
    },
    status,
    kill: async (signal = 'SIGTERM') => {
      await stop(agent.child, signal);
      // Its config and script go too: a suite starts hundreds of agents.
      await rm(dir, { recursive: true, force: true });
    },
    restart: async (signal = 'SIGKILL') => {
      await stop(agent.child, signal);
      const since = Date.now();
      agent.child = launch();
      await running(agent.child, since);
    },
    output: () => output,
  };
  await running(agent.child);
  return agent;
}
