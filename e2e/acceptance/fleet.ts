// One acceptance fleet per test file: real controller, proxy and fake-driver agent processes in a
// namespace of their own, driven through the plugin and the real kubectl.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { TestFleet } from '../../test/cluster/fleet.js';
import {
  runCommand,
  type ClusterTestContext,
  type CommandResult,
} from '../../test/cluster/harness.js';
import { iosSimulatorScript } from '../../test/cluster/agents.js';
import { aScriptedEnrolledIphone, aScriptedSimulator } from '../../test/fixtures/driver-devices.js';
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
  /** Runs `kubectl-simlock lease --platform ios` with `flags`, in the fleet's namespace. */
  leaseIos(...flags: string[]): Promise<CommandResult>;
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
  const simlock = (args: string[], timeoutMs = 60_000) =>
    runCommand(plugin, ['--kubeconfig', cluster.kubeconfigPath, '-n', fleet.namespace, ...args], {
      env,
      timeoutMs,
    });
  return {
    fleet,
    running,
    worker: name,
    simlock,
    leaseIos: (...flags) => simlock(['lease', '--platform', 'ios', ...flags]),
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

/**
 * DESIGN.md §3.2's case on a fleet of worker-a and worker-b with one iOS slot each: a lease
 * (holder) takes one of them, the other (`other`, its short name) is drained, and request req-3
 * for an iPhone 16 (holder ci) waits; `waiting` is its `lease` command's result.
 */
export async function designCaseWaiting(
  fleet: AcceptanceFleet,
): Promise<{ other: string; waiting: Promise<CommandResult> }> {
  const first = await fleet.leaseIos('--name', 'holder');
  expect(first.exitCode, first.stderr).toBe(0);
  const holderWorker = /on (worker-[ab])$/m.exec(first.stdout)?.[1];
  const other = holderWorker === 'worker-a' ? 'worker-b' : 'worker-a';
  const drained = await fleet.kubectlSimlock(['worker', 'drain', fleet.worker(other)]);
  expect(drained.exitCode, drained.stderr).toBe(0);
  const waiting = fleet.leaseIos(
    ...['--device', 'iPhone 16', '--holder', 'ci', '--name', 'req-3', '--timeout', '120s'],
  );
  return { other, waiting };
}

/**
 * Takes a fleet's two iOS slots with fill-1 and fill-2, then asks worker-a's loopback API for an
 * iPhone 16 as a program on its host would (holder local-agent): worker-a is then busy with its own
 * queue. `local` is worker-a's answer, once that request is granted.
 */
export async function fillThenAskLocally(
  fleet: AcceptanceFleet,
): Promise<{ local: Promise<Response> }> {
  for (const name of ['fill-1', 'fill-2']) {
    const result = await fleet.leaseIos('--name', name);
    expect(result.exitCode, result.stderr).toBe(0);
  }
  const local = fleet.local('worker-a', 'POST', '/v1/local/leases', {
    platform: 'ios',
    model: 'iPhone 16',
    holder: 'local-agent',
    waitTimeoutSeconds: 60,
  });
  return { local };
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

/** iOS simulators, as iosSimulatorScript's, three iPhone 16 (SIM-0001 to SIM-0003). */
export const iosSimulators: FleetWorker['script'] = iosSimulatorScript({
  devices: [1, 2, 3].map((n) =>
    aScriptedSimulator(`SIM-000${n}`, { name: n === 1 ? 'iPhone 16' : `iPhone 16 (${n})` }),
  ),
});

export const enrolledIphone = aScriptedEnrolledIphone();
