// What the end-to-end benchmarks share: a control plane of their own (etcd and kube-apiserver,
// with the CRDs), the controller as a real process, a process of in-process fake-driver agents
// (bench/agent-host.ts), the API server's own count of writes, command-line options, the machine's
// name and the statistics. The benchmarks print figures; nothing here asserts.
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { mkdir, readFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeClient, isAlreadyExists } from '../runtime/index.js';
import { freePort, startControlPlane, type ControlPlane } from '../tools/controlplane/start.js';
import type { AgentHostCommand, AgentHostReport, HostedWorker } from './agent-host.js';

const root = fileURLToPath(new URL('../', import.meta.url));
export const OUT_DIR = join(root, 'bench', 'out');

// ------------------------------------------------------------------------------------------------
// Cleanup: a benchmark stopped with Ctrl-C (or failing) must not leave etcd, kube-apiserver or
// agents running on a shared machine.

const cleanups = new Set<() => Promise<void>>();

/** Runs `cleanup` when the program is interrupted; the answer unregisters it. */
export function onInterrupt(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(`${signal}: stopping what the benchmark started\n`);
    void Promise.allSettled([...cleanups].map((cleanup) => cleanup())).then(() =>
      process.exit(130),
    );
  });
}

// ------------------------------------------------------------------------------------------------
// The control plane

export interface BenchControlPlane {
  controlPlane: ControlPlane;
  admin: KubeClient;
  stop(): Promise<void>;
}

/**
 * A fresh control plane with the CRDs applied and established (about 10 s). `servingAddresses`:
 * more addresses its certificate names (the host side of a partition's pair).
 */
export async function startBenchControlPlane(
  options: {
    servingAddresses?: string[];
    auditWrites?: { path: string; resources: string[] };
  } = {},
): Promise<BenchControlPlane> {
  const controlPlane = await startControlPlane({ ...options, log });
  try {
    const run = promisify(execFile);
    const kubectl = join(controlPlane.binDir, 'kubectl');
    const kubeconfig = ['--kubeconfig', controlPlane.kubeconfigPath];
    await run(kubectl, [...kubeconfig, 'apply', '--server-side', '-f', join(root, 'crds')]);
    await run(kubectl, [
      ...kubeconfig,
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd',
      '--all',
    ]);
  } catch (error) {
    await controlPlane.stop();
    throw error;
  }
  const forget = onInterrupt(() => controlPlane.stop());
  const admin = KubeClient.fromOptions({ kubeconfig: controlPlane.kubeconfigPath });
  await warmUpStorage(admin);
  return {
    controlPlane,
    admin,
    stop: async () => {
      forget();
      await controlPlane.stop();
    },
  };
}

/**
 * A new CRD's storage (and its watch cache) is built on first use, and for a few seconds its
 * watches answer 429 "storage is (re)initializing", which sends every informer into backoff. A
 * benchmark measures the steady state, so it waits here until each simlock resource can be watched.
 */
async function warmUpStorage(admin: KubeClient): Promise<void> {
  for (const resource of ['workers', 'leaserequests', 'leases'])
    await waitUntilWatchable(
      admin,
      `/apis/simlock.dev/v1alpha1/${resource}`,
      `${resource} storage`,
    );
}

/**
 * Waits until a watch of `path` opens: a CRD's storage built anew (at its creation, or after an
 * update of the CRD) answers 429 "storage is (re)initializing" for a moment.
 */
export async function waitUntilWatchable(
  admin: KubeClient,
  path: string,
  what: string,
): Promise<void> {
  await waitUntil(
    async () => {
      try {
        await admin.watch(
          path,
          { timeoutSeconds: 1 },
          () => undefined,
          new AbortController().signal,
        );
        return true;
      } catch {
        return false;
      }
    },
    60_000,
    `${what} watchable`,
    200,
  );
}

export async function createNamespace(admin: KubeClient, name: string): Promise<void> {
  try {
    await admin.create('/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name },
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

// ------------------------------------------------------------------------------------------------
// Writes as the API server counts them

/** Writes by "VERB group/resource[/subresource]", from apiserver_request_total; refused ones apart. */
export type WriteCounts = Record<string, number>;

const WRITE_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);

/** The API server's running count of writes (GET /metrics; admin may read it). */
export async function apiserverWrites(admin: KubeClient): Promise<WriteCounts> {
  const text = String(await admin.get('/metrics'));
  const counts: WriteCounts = {};
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const close = line.lastIndexOf('}');
    const labels: Record<string, string> = {};
    for (const match of line.slice(line.indexOf('{') + 1, close).matchAll(/(\w+)="([^"]*)"/g))
      labels[match[1] ?? ''] = match[2] ?? '';
    if (!WRITE_VERBS.has(labels.verb ?? '')) continue;
    const resource = `${labels.group ? `${labels.group}/` : ''}${labels.resource ?? ''}${labels.subresource ? `/${labels.subresource}` : ''}`;
    // A refused write (a 409 of a conditional update) costs the API server too: counted, apart.
    const refused = labels.code !== undefined && !labels.code.startsWith('2');
    const key = `${labels.verb} ${resource}${refused ? ` ${labels.code}` : ''}`;
    counts[key] = (counts[key] ?? 0) + Number(line.slice(close + 1).trim());
  }
  return counts;
}

/** after − before, leaving out what did not change. */
export function writesBetween(before: WriteCounts, after: WriteCounts): WriteCounts {
  const delta: WriteCounts = {};
  for (const [key, value] of Object.entries(after)) {
    const change = value - (before[key] ?? 0);
    if (change > 0) delta[key] = change;
  }
  return delta;
}

export function totalWrites(counts: WriteCounts, keep: (key: string) => boolean = () => true) {
  return Object.entries(counts)
    .filter(([key]) => keep(key))
    .reduce((sum, [, value]) => sum + value, 0);
}

// ------------------------------------------------------------------------------------------------
// The controller, as a real process

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
      join(root, 'controller/main.ts'),
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
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`the controller exited; see ${options.logPath}`);
      const answer = await fetch(`${url}/readyz`).catch(() => undefined);
      return answer?.ok === true;
    },
    60_000,
    'controller ready',
  );
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

// ------------------------------------------------------------------------------------------------
// Agents: many in one process

export interface AgentHost {
  child: ChildProcess;
  /** Writes the agents' client sent, by method, since the host started. */
  writes(): Promise<Record<string, number>>;
  send(command: AgentHostCommand): void;
  stop(): Promise<void>;
}

export interface AgentHostOptions {
  kubeconfigPath: string;
  systemNamespace: string;
  fleetLabel: string;
  workers: HostedWorker[];
  agentConfig?: Record<string, unknown>;
  logPath: string;
  /** Write a V8 CPU profile of the agents' process into this folder when it stops. */
  cpuProfileDir?: string | undefined;
}

/** Starts `bench/agent-host.ts` and waits until every agent has registered and written its view. */
export async function startAgentHost(options: AgentHostOptions): Promise<AgentHost> {
  const child = fork(fileURLToPath(new URL('./agent-host.ts', import.meta.url)), [], {
    execArgv: [
      ...(options.cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfileDir] : []),
      '--import',
      'tsx',
    ],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: { ...process.env, SIMLOCK_LOG_LEVEL: process.env.SIMLOCK_LOG_LEVEL ?? 'warn' },
  });
  child.stderr?.pipe(createWriteStream(options.logPath, { flags: 'a' }));
  const forget = onInterrupt(() => stopChild(child, 'SIGKILL'));
  child.once('exit', forget);
  const waiters: ((report: AgentHostReport) => boolean)[] = [];
  child.on('message', (message: AgentHostReport) => {
    for (const [index, waiter] of waiters.entries()) {
      if (waiter(message)) {
        waiters.splice(index, 1);
        return;
      }
    }
  });
  const next = <K extends AgentHostReport['kind']>(kind: K, timeoutMs: number) =>
    new Promise<Extract<AgentHostReport, { kind: K }>>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`agent host: no ${kind} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onExit = () => reject(new Error(`agent host exited; see ${options.logPath}`));
      child.once('exit', onExit);
      waiters.push((report) => {
        if (report.kind === 'failed') {
          clearTimeout(timer);
          reject(new Error(`agent host: ${report.message}`));
          return true;
        }
        if (report.kind !== kind) return false;
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(report as Extract<AgentHostReport, { kind: K }>);
        return true;
      });
    });
  const send = (command: AgentHostCommand) => child.send(command);
  const started = next('started', 600_000);
  send({
    kind: 'start',
    kubeconfigPath: options.kubeconfigPath,
    systemNamespace: options.systemNamespace,
    fleetLabel: options.fleetLabel,
    workers: options.workers,
    agentConfig: options.agentConfig ?? {},
  });
  await started;
  return {
    child,
    send,
    async writes() {
      const answer = next('writes', 30_000);
      send({ kind: 'writes' });
      return (await answer).byMethod;
    },
    async stop() {
      if (child.exitCode !== null) return;
      send({ kind: 'stop' });
      await stopChild(child, undefined, 30_000);
    },
  };
}

// ------------------------------------------------------------------------------------------------
// CPU time of the benchmark and what it started

/** CPU seconds (user + system) by process: this program and its children, named by command. */
export async function cpuSeconds(): Promise<Record<string, number>> {
  const ticks = 100; // USER_HZ on Linux
  const read = async (pid: number): Promise<{ name: string; seconds: number } | undefined> => {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
      const script = cmdline.find((arg) => arg.endsWith('.ts'));
      const name = script
        ? script.slice(script.lastIndexOf('/', script.lastIndexOf('/') - 1) + 1)
        : stat.slice(stat.indexOf('(') + 1, close);
      return { name, seconds: (Number(fields[11]) + Number(fields[12])) / ticks };
    } catch {
      return undefined;
    }
  };
  const children = await readFile(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8')
    .then((text) => text.trim().split(/\s+/).filter(Boolean).map(Number))
    .catch(() => [] as number[]);
  const totals: Record<string, number> = {};
  for (const pid of [process.pid, ...children]) {
    const entry = await read(pid);
    if (entry) totals[entry.name] = (totals[entry.name] ?? 0) + entry.seconds;
  }
  return totals;
}

export function cpuBetween(before: Record<string, number>, after: Record<string, number>) {
  return Object.fromEntries(
    Object.entries(after).map(([name, seconds]) => [
      name,
      Math.round((seconds - (before[name] ?? 0)) * 100) / 100,
    ]),
  );
}

// ------------------------------------------------------------------------------------------------
// Small things

/** Stops a child: a signal (or none, if it was asked to stop), SIGKILL after the grace. */
export function stopChild(
  child: ChildProcess,
  signal: NodeJS.Signals | undefined,
  graceMs = 15_000,
): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    if (signal) child.kill(signal);
  });
}

export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Runs `task` over `items` with at most `limit` at once. */
export async function inParallel<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let nextIndex = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (nextIndex < items.length) {
      const index = nextIndex++;
      await task(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100); 0 for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] ?? 0;
}

/** The machine, as the figures should name it. */
export function machineName(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  return `${cpus.length} × ${model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
}

export function cpuCount(): number {
  return os.cpus().length;
}

/** A run's folder under bench/out/ (logs, profiles, JSON). */
export async function outDir(name: string): Promise<string> {
  const dir = join(OUT_DIR, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

/** `--name value` and `--flag` on the command line. */
export class CommandLine {
  constructor(private readonly argv: readonly string[] = process.argv.slice(2)) {}

  has(name: string): boolean {
    return this.argv.includes(name);
  }

  string(name: string): string | undefined {
    const index = this.argv.indexOf(name);
    if (index < 0) return undefined;
    const value = this.argv[index + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(`${name} takes a value`);
    return value;
  }

  integer(name: string, fallback: number, min = 1): number {
    const raw = this.string(name);
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min)
      throw new Error(`${name} takes an integer of at least ${min}`);
    return value;
  }

  /** A flag whose value may be left out (`--json` or `--json FILE`): the value, if given. */
  optionalValue(name: string): string | undefined {
    const index = this.argv.indexOf(name);
    const value = index < 0 ? undefined : this.argv[index + 1];
    return value !== undefined && !value.startsWith('--') ? value : undefined;
  }

  /** A comma-separated list. */
  list(name: string): string[] | undefined {
    return this.string(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  }

  /** Refuses anything not in `known` (a typo must not run a 10-minute benchmark with defaults). */
  only(known: readonly string[]): void {
    for (const [index, arg] of this.argv.entries()) {
      if (!arg.startsWith('--')) {
        const previous = this.argv[index - 1];
        if (previous?.startsWith('--') && known.includes(previous)) continue;
      }
      if (!known.includes(arg))
        throw new Error(`unknown argument ${arg}; known: ${known.join(' ')}`);
    }
  }
}

/** A progress line on stderr, with the time of day. */
export function log(message: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
