// A whole simlock fleet on this machine, as real processes: the controller, the exec proxy and
// fake-driver agents, against a control plane (the embedded one, or a cluster in a kubeconfig).
// `npm run up` runs it for people; the acceptance tests run it too.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KubeClient, isAlreadyExists } from '../../runtime/index.js';
import { freePort } from '../../tools/controlplane/start.js';
import { serviceAccountToken } from '../../test/cluster/service-account-token.js';
import { ensureBundles, launchArgs, type Component } from '../../test/launch.js';

export const SYSTEM_NAMESPACE = 'simlock-system';
export const PROXY_SERVICE_ACCOUNT = 'simlock-proxy';

/** The demo's hosts: iOS simulators; an enrolled iPhone 15 Pro; Android emulators and a phone. */
export const DEMO_WORKERS: FleetWorker[] = [
  {
    name: 'worker-a',
    label: 'worker-a',
    script: {
      models: [
        { name: 'iPhone 16', platform: 'ios', class: 'phone' },
        { name: 'iPhone 16 Pro', platform: 'ios', class: 'phone' },
        { name: 'iPad Pro 13-inch (M4)', platform: 'ios', class: 'tablet' },
      ],
      runtimes: [{ platform: 'ios', version: '18.4' }],
      // No device of it yet: the agent makes one for the first lease that wants it.
      makeable: [{ platform: 'ios', model: 'iPhone 17', os: ['18.4'], bootMs: 4000 }],
      provisionMs: 3000,
      devices: [
        {
          id: 'A1B2C3D4-0001-4000-8000-000000000001',
          name: 'iPhone 16',
          model: 'iPhone 16',
          platform: 'ios',
          os: '18.4',
          booted: true,
        },
        {
          id: 'A1B2C3D4-0002-4000-8000-000000000002',
          name: 'iPhone 16 Pro',
          model: 'iPhone 16 Pro',
          platform: 'ios',
          os: '18.4',
        },
        {
          id: 'A1B2C3D4-0003-4000-8000-000000000003',
          name: 'iPad Pro 13-inch (M4)',
          model: 'iPad Pro 13-inch (M4)',
          platform: 'ios',
          os: '18.4',
        },
      ],
      bootMs: 300,
    },
    limits: { running: 4, platforms: { ios: { running: 2 } } },
  },
  {
    name: 'worker-b',
    label: 'worker-b',
    script: {
      platforms: ['ios'],
      devices: [
        {
          id: '00008110-001A2B3C4D5E',
          name: "Tester's iPhone",
          model: 'iPhone 15 Pro',
          platform: 'ios',
          os: '18.4',
          physical: true,
        },
      ],
    },
    limits: { running: 0, platforms: { ios: { running: 0 } } },
  },
  {
    name: 'worker-c',
    label: 'worker-c',
    script: {
      models: [{ name: 'Pixel 8', platform: 'android', class: 'phone' }],
      runtimes: [{ platform: 'android', version: '34' }],
      devices: [
        {
          id: 'Pixel_8_API_34',
          name: 'Pixel 8 (emulator)',
          model: 'Pixel 8',
          platform: 'android',
          os: '34',
        },
        {
          id: 'R58N12ABCDE',
          name: 'Galaxy S23',
          model: 'Galaxy S23',
          platform: 'android',
          os: '34',
          physical: true,
        },
      ],
      bootMs: 500,
    },
    limits: { running: 2, platforms: { android: { running: 2 } } },
  },
];

export interface FleetWorker {
  name: string;
  label?: string;
  script: Record<string, unknown>;
  limits?: Record<string, unknown>;
  drained?: boolean;
}

export interface LocalFleetOptions {
  kubeconfigPath: string;
  /** Where config files, scripts, tokens and logs go. */
  dir: string;
  workers: FleetWorker[];
  /** Namespace for heartbeats and the controller's election Lease. */
  systemNamespace?: string;
  /** A label value on the Workers, and the controller's selector (tests share one cluster). */
  fleetLabel?: string;
  watchNamespace?: string;
  probeIntervalMs?: number;
  heartbeatSeconds?: number;
  /** More flags for the controller (after its own: a flag given twice takes the last). */
  controllerArgs?: string[];
}

export interface RunningFleet {
  proxyUrl: string;
  controllerUrl: string;
  agents: Map<string, AgentHandle>;
  /** Rewrites an agent's fake-driver script (presence flips, devices removed). */
  setScript(worker: string, script: Record<string, unknown>): Promise<void>;
  stop(): Promise<void>;
}

export interface AgentHandle {
  child: ChildProcess;
  scriptPath: string;
  localPort: number;
}

function start(component: Component, args: string[], logPath: string): ChildProcess {
  const child = spawn(process.execPath, launchArgs(component, args), {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env },
  });
  void import('node:fs').then(({ createWriteStream }) =>
    child.stderr?.pipe(createWriteStream(logPath, { flags: 'a' })),
  );
  return child;
}

async function ensure(client: KubeClient, path: string, body: unknown): Promise<void> {
  try {
    await client.create(path, body);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

/** Mints a token for the proxy's service account, which the agents accept for exec (ADR 0003). */
export async function proxyToken(client: KubeClient, namespace: string): Promise<string> {
  await ensure(client, `/api/v1/namespaces/${namespace}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: PROXY_SERVICE_ACCOUNT },
  });
  return serviceAccountToken(client, namespace, PROXY_SERVICE_ACCOUNT, {
    expirationSeconds: 86_400,
  });
}

/**
 * The exec proxy's arguments for agents on this machine: it listens on loopback at `port` and
 * shows the agents the token in `tokenPath` (proxyToken's). The agents serve plain HTTP on this
 * machine, which the proxy refuses unless told (docs/adr/0025-agent-tls.md).
 */
export function localProxyArgs(kubeconfigPath: string, port: number, tokenPath: string): string[] {
  return [
    '--kubeconfig',
    kubeconfigPath,
    '--listen',
    `127.0.0.1:${port}`,
    '--agent-token-file',
    tokenPath,
    '--allow-plain-http-agents',
  ];
}

export async function startLocalFleet(options: LocalFleetOptions): Promise<RunningFleet> {
  const client = KubeClient.fromOptions({ kubeconfig: options.kubeconfigPath });
  const systemNamespace = options.systemNamespace ?? SYSTEM_NAMESPACE;
  const children: ChildProcess[] = [];
  await mkdir(options.dir, { recursive: true });
  await ensureBundles();
  await ensure(client, '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: systemNamespace },
  });

  const tokenPath = join(options.dir, 'proxy.token');
  await writeFile(tokenPath, await proxyToken(client, systemNamespace), { mode: 0o600 });
  const proxyPort = await freePort();
  const controllerPort = await freePort();
  const selector = options.fleetLabel
    ? ['--worker-selector', `simlock.dev/fleet=${options.fleetLabel}`]
    : [];
  children.push(
    start(
      'controller',
      [
        '--kubeconfig',
        options.kubeconfigPath,
        '--namespace',
        systemNamespace,
        '--listen',
        `127.0.0.1:${controllerPort}`,
        '--reason-write-interval-ms',
        '200',
        ...(options.watchNamespace ? ['--watch-namespace', options.watchNamespace] : []),
        ...selector,
        ...(options.controllerArgs ?? []),
      ],
      join(options.dir, 'controller.log'),
    ),
    start(
      'proxy',
      localProxyArgs(options.kubeconfigPath, proxyPort, tokenPath),
      join(options.dir, 'proxy.log'),
    ),
  );

  const agents = new Map<string, AgentHandle>();
  for (const worker of options.workers) {
    const scriptPath = join(options.dir, `${worker.name}.script.yaml`);
    const configPath = join(options.dir, `${worker.name}.yaml`);
    const localPort = await freePort();
    await writeFile(scriptPath, stringify(worker.script));
    await writeFile(
      configPath,
      stringify({
        name: worker.name,
        ...(worker.label ? { label: worker.label } : {}),
        ...(options.fleetLabel ? { labels: { 'simlock.dev/fleet': options.fleetLabel } } : {}),
        namespace: systemNamespace,
        drivers: ['fake'],
        fakeScript: scriptPath,
        // Its own data (the steps' timings) per run: a fresh fleet estimates from the defaults.
        dataDir: join(options.dir, `${worker.name}.data`),
        ...(worker.limits ? { limits: worker.limits } : {}),
        probeIntervalMs: options.probeIntervalMs ?? 1000,
        refreshIntervalMs: 1000,
        viewDebounceMs: 100,
        heartbeat: { durationSeconds: options.heartbeatSeconds ?? 10, renewEverySeconds: 2 },
        listen: { host: '127.0.0.1', port: 0 },
        local: { host: '127.0.0.1', port: localPort },
        execAllowedIdentities: [
          `system:serviceaccount:${systemNamespace}:${PROXY_SERVICE_ACCOUNT}`,
        ],
      }),
    );
    const child = start(
      'agent',
      ['--config', configPath, '--kubeconfig', options.kubeconfigPath],
      join(options.dir, `${worker.name}.log`),
    );
    children.push(child);
    agents.set(worker.name, { child, scriptPath, localPort });
    if (worker.drained) {
      // Drained from the start: the agent creates the Worker, the operator drains it.
      void waitForWorker(client, worker.name).then(() =>
        client.patch(`/apis/simlock.dev/v1alpha1/workers/${worker.name}`, {
          spec: { drained: true },
        }),
      );
    }
  }

  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 5000).unref();
          }),
      ),
    );
  };

  let waiting = true;
  try {
    await Promise.all(
      options.workers.map((worker) =>
        Promise.race([
          waitForWorker(client, worker.name, true),
          exitedEarly(agents.get(worker.name)?.child, worker.name, options.dir, () => waiting),
        ]),
      ),
    ).finally(() => (waiting = false));
    await waitForHttp(`http://127.0.0.1:${controllerPort}/readyz`);
    await waitForHttp(`http://127.0.0.1:${proxyPort}/healthz`);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    controllerUrl: `http://127.0.0.1:${controllerPort}`,
    agents,
    async setScript(worker, script) {
      const agent = agents.get(worker);
      if (!agent) throw new Error(`no agent ${worker}`);
      const { rename } = await import('node:fs/promises');
      await writeFile(`${agent.scriptPath}.next`, stringify(script));
      await rename(`${agent.scriptPath}.next`, agent.scriptPath);
    },
    stop,
  };
}

/**
 * Rejects, with the end of its log, if the agent exits while the fleet still waits for its Worker;
 * an exit after that (the fleet stopped) settles nothing.
 */
async function exitedEarly(
  child: ChildProcess | undefined,
  name: string,
  dir: string,
  waiting: () => boolean,
): Promise<never> {
  if (!child) throw new Error(`no agent ${name}`);
  const code = await new Promise<string>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null)
      resolve(String(child.signalCode ?? child.exitCode));
    else child.once('exit', (exit, signal) => resolve(String(signal ?? exit)));
  });
  if (!waiting()) return new Promise<never>(() => undefined);
  const { readFile } = await import('node:fs/promises');
  const log = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '');
  throw new Error(`agent ${name} exited (${code}) before its Worker came up: ${log.slice(-1500)}`);
}

async function waitForWorker(
  client: KubeClient,
  name: string,
  running = false,
  // Three agents, the controller and the proxy start at once; on a loaded machine that is slow.
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const worker = (await client.get(`/apis/simlock.dev/v1alpha1/workers/${name}`)) as {
        status?: { health?: string };
      };
      if (!running || worker.status?.health === 'running') return;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline)
      throw new Error(`worker ${name} did not come up within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function waitForHttp(url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not ready within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
