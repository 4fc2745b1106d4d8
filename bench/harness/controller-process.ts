// The controller as a real process (from its sources, on the pinned Node), one replica without
// leader election, its log in a file and its metrics at hand.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../tools/index.js';
import { onInterrupt } from './interrupt.js';
import { REPO_ROOT } from './paths.js';
import { stopChild } from './processes.js';
import { waitUntil } from './wait-until.js';

export interface ControllerProcess {
  child: ChildProcess;
  url: string;
  /** Its Prometheus metrics, summed over label values: name → value. */
  metrics(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export interface ControllerStartOptions {
  kubeconfigPath: string;
  systemNamespace: string;
  watchNamespace: string;
  workerSelector: string;
  /** 0: unlimited. */
  qps?: number;
  burst?: number;
  reasonWriteIntervalMs?: number;
  /** Write a V8 CPU profile of the controller into this folder when it stops. */
  cpuProfileDir?: string | undefined;
  logPath: string;
  extraArgs?: string[];
}

export async function startController(options: ControllerStartOptions): Promise<ControllerProcess> {
  const port = await freePort();
  const nodeFlags = options.cpuProfileDir
    ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir]
    : [];
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--import',
      'tsx',
      join(REPO_ROOT, 'controller/main.ts'),
      '--kubeconfig',
      options.kubeconfigPath,
      '--namespace',
      options.systemNamespace,
      '--watch-namespace',
      options.watchNamespace,
      '--worker-selector',
      options.workerSelector,
      '--listen',
      `127.0.0.1:${port}`,
      '--leader-election=false',
      '--kube-api-qps',
      String(options.qps ?? 0),
      '--kube-api-burst',
      String(options.burst ?? 0),
      ...(options.reasonWriteIntervalMs !== undefined
        ? ['--reason-write-interval-ms', String(options.reasonWriteIntervalMs)]
        : []),
      ...(options.extraArgs ?? []),
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SIMLOCK_LOG_LEVEL: process.env.SIMLOCK_LOG_LEVEL ?? 'warn' },
    },
  );
  child.stderr?.pipe(createWriteStream(options.logPath, { flags: 'a' }));
  const forget = onInterrupt(() => stopChild(child, 'SIGKILL'));
  child.once('exit', forget);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntil(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`the controller exited; see ${options.logPath}`);
        const answer = await fetch(`${url}/readyz`).catch(() => undefined);
        return answer?.ok === true;
      },
      60_000,
      'controller ready',
    );
  } catch (error) {
    // Not left running beside the runs that follow (it would retry against a control plane
    // that is gone, on the cores they measure).
    await stopChild(child, 'SIGKILL');
    throw error;
  }
  return {
    child,
    url,
    async metrics() {
      const text = await (await fetch(`${url}/metrics`)).text();
      return parseMetrics(text);
    },
    // SIGTERM: the controller stops its informers and exits, which also writes a CPU profile.
    stop: () => stopChild(child, 'SIGTERM'),
  };
}

/** Prometheus text → name (with _sum, _count suffixes as they stand) → value, labels summed. */
export function parseMetrics(text: string): Record<string, number> {
  const values: Record<string, number> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const name = line.slice(0, line.search(/[{ ]/));
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) values[name] = (values[name] ?? 0) + value;
  }
  return values;
}
