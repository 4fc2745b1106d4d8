// Many agents in one process: starts bench/agent-host.ts (in-process fake-driver agents) and talks
// to it over the fork IPC channel.
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AgentHostCommand, AgentHostReport, HostedWorker } from '../agent-host.js';
import { onInterrupt } from './interrupt.js';
import { stopChild } from './processes.js';

/** The label that marks a benchmark's Workers as its fleet (the hosted agents' `fleetLabel` its value). */
export const FLEET_LABEL = 'simlock.dev/fleet';

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
  const child = fork(fileURLToPath(new URL('../agent-host.ts', import.meta.url)), [], {
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
