// What a cluster test file needs: the admin client, its own namespace, the real kubectl, and
// identities minted by the control plane's CA.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, inject } from 'vitest';
import { KubeClient } from '../../runtime/index.js';

const run = promisify(execFile);

export interface ClusterTestContext {
  kubeconfigPath: string;
  binDir: string;
  admin: KubeClient;
  /** This file's namespace, created before its tests and deleted after. */
  namespace: string;
  /** Runs the real kubectl as admin; answers stdout, stderr and the exit code. */
  kubectl(
    args: string[],
    options?: { kubeconfig?: string; input?: string },
  ): Promise<CommandResult>;
}

export interface CommandResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export async function runCommand(
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<CommandResult> {
  const child = run(command, args, {
    env: options.env ?? process.env,
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 16 << 20,
  });
  if (options.input !== undefined) {
    child.child.stdin?.end(options.input);
  }
  try {
    const { stdout, stderr } = await child;
    return { stdout, stderr, exitCode: 0 };
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; code?: number | string };
    return {
      stdout: failure.stdout ?? '',
      stderr: failure.stderr ?? String(error),
      exitCode: typeof failure.code === 'number' ? failure.code : 1,
    };
  }
}

/** Call at the top of a cluster test file. */
export function useCluster(prefix = 'test'): ClusterTestContext {
  const kubeconfigPath = inject('kubeconfigPath');
  const binDir = inject('controlPlaneBin');
  const admin = KubeClient.fromOptions({ kubeconfig: kubeconfigPath });
  const namespace = `${prefix}-${randomBytes(3).toString('hex')}`;
  const context: ClusterTestContext = {
    kubeconfigPath,
    binDir,
    admin,
    namespace,
    kubectl: (args, options = {}) =>
      runCommand(
        `${binDir}/kubectl`,
        ['--kubeconfig', options.kubeconfig ?? kubeconfigPath, ...args],
        {
          ...(options.input !== undefined ? { input: options.input } : {}),
        },
      ),
  };
  beforeAll(async () => {
    await admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace },
    });
  });
  afterAll(async () => {
    // The test control plane's namespace controller empties it (measured: the cluster tier's wall
    // time is the same whether or not every file's namespace is deleted, within a few seconds).
    await admin.delete(`/api/v1/namespaces/${namespace}`).catch(() => undefined);
  });
  return context;
}

/** Polls `check` until it answers a value (not undefined) or the deadline passes. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  { timeoutMs = 15_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what} not met within ${timeoutMs} ms${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
