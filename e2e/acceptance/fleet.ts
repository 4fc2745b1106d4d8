// One acceptance fleet per test file: real controller, proxy and fake-driver agent processes in a
// namespace of their own, driven through the plugin and the real kubectl.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestFleet } from '../../test/cluster/fleet.js';
import {
  runCommand,
  type ClusterTestContext,
  type CommandResult,
} from '../../test/cluster/harness.js';
import { aScriptedEnrolledIphone } from '../../test/fixtures/driver-devices.js';
import { startLocalFleet, type FleetWorker, type RunningFleet } from '../fleet/local-fleet.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
export const plugin = join(root, 'bin', 'kubectl-simlock');

export interface AcceptanceFleet {
  fleet: TestFleet;
  running: RunningFleet;
  /** The cluster-wide name of a worker ("worker-a" → "<namespace>-worker-a"). */
  worker(short: string): string;
  /** Runs `kubectl-simlock` in the fleet's namespace. */
  simlock(args: string[], timeoutMs?: number): Promise<CommandResult>;
  /** Runs `kubectl simlock …` through the real kubectl, which finds the plugin on PATH. */
  kubectlSimlock(args: string[]): Promise<CommandResult>;
  /** Calls an agent's loopback API. */
  local(short: string, method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

export async function startAcceptanceFleet(
  cluster: ClusterTestContext,
  workers: FleetWorker[],
  options: { probeIntervalMs?: number; controllerArgs?: string[] } = {},
): Promise<AcceptanceFleet> {
  const fleet = await TestFleet.create(cluster);
  const name = (short: string) => `${fleet.namespace}-${short}`;
  const dir = await mkdtemp(join(tmpdir(), 'simlock-acceptance-'));
  const running = await startLocalFleet({
    kubeconfigPath: cluster.kubeconfigPath,
    dir,
    workers: workers.map((worker) => ({
      ...worker,
      name: name(worker.name),
      label: worker.label ?? worker.name,
    })),
    systemNamespace: fleet.namespace,
    watchNamespace: fleet.namespace,
    fleetLabel: fleet.namespace,
    probeIntervalMs: options.probeIntervalMs ?? 500,
    heartbeatSeconds: 10,
    controllerArgs: options.controllerArgs,
  });
  const env = {
    ...process.env,
    PATH: `${join(root, 'bin')}:${cluster.binDir}:${process.env.PATH ?? ''}`,
    KUBECACHEDIR: join(dir, 'kube-cache'),
  };
  return {
    fleet,
    running,
    worker: name,
    simlock: (args, timeoutMs = 60_000) =>
      runCommand(plugin, ['--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace, ...args], {
        env,
        timeoutMs,
      }),
    kubectlSimlock: (args) =>
      runCommand(
        `${cluster.binDir}/kubectl`,
        ['simlock', '--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace, ...args],
        { env },
      ),
    local: (short, method, path, body) => {
      const agent = running.agents.get(name(short));
      if (!agent) throw new Error(`no agent ${short}`);
      return fetch(`http://127.0.0.1:${agent.localPort}${path}`, {
        method,
        ...(body !== undefined
          ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
          : {}),
      });
    },
    stop: () => running.stop(),
  };
}

/** The error JSON the plugin prints on stderr. */
export function errorOf(result: CommandResult): {
  code: string;
  message: string;
  details?: Record<string, string>;
} {
  const line = result.stderr.split('\n').find((text) => text.trim().startsWith('{"error"'));
  if (!line) throw new Error(`no error JSON on stderr: ${result.stderr}`);
  return (JSON.parse(line) as { error: { code: string; message: string } }).error;
}

export const iosSimulators: FleetWorker['script'] = {
  models: [
    { name: 'iPhone 16', platform: 'ios', class: 'phone' },
    { name: 'iPad Pro', platform: 'ios', class: 'tablet' },
  ],
  runtimes: [{ platform: 'ios', version: '18.4' }],
  devices: [
    { id: 'SIM-0001', name: 'iPhone 16', model: 'iPhone 16', platform: 'ios', os: '18.4' },
    { id: 'SIM-0002', name: 'iPhone 16 (2)', model: 'iPhone 16', platform: 'ios', os: '18.4' },
    { id: 'SIM-0003', name: 'iPhone 16 (3)', model: 'iPhone 16', platform: 'ios', os: '18.4' },
  ],
  bootMs: 50,
};

export const enrolledIphone = aScriptedEnrolledIphone();
