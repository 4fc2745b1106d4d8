// The plugin (bin/kubectl-simlock) as a process, as a person runs it: with a kubeconfig and a
// namespace, or through the real kubectl, which finds it on PATH; its error line read back; and,
// for a file of plugin stories, a fresh fleet per test with the controller watching it.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { reasonsByWorker } from '../../api/index.js';
import { controllerStories } from './controller.js';
import type { TestFleet } from './fleet.js';
import { runCommand, type ClusterTestContext, type CommandResult } from './harness.js';

/** The folder of the checkout's launchers (`kubectl-simlock` among them). */
export const binDir = fileURLToPath(new URL('../../bin/', import.meta.url));
/** The plugin's launcher in the checkout. */
export const pluginPath = join(binDir, 'kubectl-simlock');

/** Runs the plugin with `args` as whoever `kubeconfig` names, in `namespace`. */
export function runPlugin(
  kubeconfig: string,
  namespace: string,
  args: readonly string[],
): Promise<CommandResult> {
  return runCommand(pluginPath, [...args, '--kubeconfig', kubeconfig, '-n', namespace]);
}

/** The plugin started with `args` as `runPlugin` runs it, for a test that signals or reads it live. */
export function spawnPlugin(
  kubeconfig: string,
  namespace: string,
  args: readonly string[],
): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(pluginPath, [...args, '--kubeconfig', kubeconfig, '-n', namespace], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `kubectl simlock ...` through the real kubectl: the plugin found on PATH, KUBECONFIG passed on. */
export function runKubectlSimlock(
  cluster: Pick<ClusterTestContext, 'binDir' | 'kubeconfigPath'>,
  args: readonly string[],
): Promise<CommandResult> {
  return runCommand(`${cluster.binDir}/kubectl`, ['simlock', ...args], {
    env: {
      ...process.env,
      PATH: `${binDir}:${process.env.PATH ?? ''}`,
      KUBECONFIG: cluster.kubeconfigPath,
    },
  });
}

/** The error the plugin printed: its last line on stderr, `{"error":{...}}`. */
export function pluginError(result: CommandResult): { code: string; message: string } | undefined {
  const last = result.stderr.trimEnd().split('\n').at(-1) ?? '';
  return (JSON.parse(last) as { error?: { code: string; message: string } }).error;
}

/**
 * For a file of plugin stories: `setup()` gives a fresh fleet (the test plays its agents) with the
 * controller in-process watching it, or none with `controller: false`, both stopped and cleaned up
 * after each test; `simlock(fleet, ...args)` runs the plugin as admin in the fleet's namespace,
 * `spawn(fleet, ...args)` starts it so, and `kubectlSimlock(...args)` runs it through kubectl.
 */
export function pluginStories(cluster: ClusterTestContext) {
  const stories = controllerStories(cluster);
  return {
    setup: async (options: { controller?: boolean } = {}): Promise<TestFleet> => {
      const { fleet, start } = await stories.setup();
      if (options.controller !== false) await start();
      return fleet;
    },
    simlock: (fleet: TestFleet, ...args: string[]): Promise<CommandResult> =>
      runPlugin(cluster.kubeconfigPath, fleet.namespace, args),
    spawn: (fleet: TestFleet, ...args: string[]) =>
      spawnPlugin(cluster.kubeconfigPath, fleet.namespace, args),
    kubectlSimlock: (...args: string[]) => runKubectlSimlock(cluster, args),
  };
}

/** Waits until request `name` waits with a reason from each of `workers` workers: what `list` and `why` then show. */
export function waitingWithReasons(fleet: TestFleet, name: string, workers: number) {
  return fleet.requestWhere(
    name,
    (r) => r.status?.phase === 'Waiting' && reasonsByWorker(r.status).length === workers,
  );
}
