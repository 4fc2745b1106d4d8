// The soak's fleet: fake-driver agents as real processes (two of them inside network namespaces, so
// they can be cut off), the exec proxy as a process, and a user allowed to exec. Every agent has
// two iPhone 16 simulators (the two that can be cut off four); three also offer iPads (the model the load oversubscribes, so requests
// wait on a full fleet); every fifth has a physical iPhone; the two that can be cut off each offer
// a capability of their own, so a request can be pinned to one of them.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PROXY_SERVICE_ACCOUNT, localProxyArgs, proxyToken } from '../../e2e/index.js';
import type { KubeClient } from '../../runtime/index.js';
import {
  NetworkPartition,
  allowLeaseExec,
  ensureBundles,
  launchArgs,
  pairAddresses,
  serviceAccountToken,
  startAgent,
  type AgentProcess,
} from '../../test/index.js';
import { freePort } from '../../tools/index.js';
import { inParallel, onInterrupt, stopChild, waitUntil } from '../harness/index.js';

export const FLEET = 'soak';
export const NAMESPACE = 'soak';
export const SYSTEM_NAMESPACE = 'soak-system';
/** The agents' heartbeat: a partitioned one reads disconnected within this plus 1 s. */
export const HEARTBEAT_SECONDS = 10;
export const USER_ACCOUNT = 'soak-user';

export interface SoakAgent {
  process: AgentProcess;
  index: number;
  /** Offers iPads. */
  ipad: boolean;
  physical: boolean;
  /** Runs inside a network namespace; its capability pins requests to it. */
  partition?: { network: NetworkPartition; capability: string };
  /** The V8 inspector's port on loopback (the last agent only: the one whose memory is read). */
  inspectorPort?: number;
}

export const PARTITIONED_AGENTS = 2;
const IPAD_AGENTS = [2, 3, 4];

export function agentName(index: number): string {
  return `soak-${String(index).padStart(2, '0')}`;
}

function script(index: number, sims: number): Record<string, unknown> {
  const ipad = IPAD_AGENTS.includes(index);
  const physical = index % 5 === 0;
  const sim = (n: number) => ({
    id: `sim-${index}-${n}`,
    name: `iPhone 16 (${n})`,
    model: 'iPhone 16',
    platform: 'ios',
    os: '18.4',
  });
  return {
    models: [
      { name: 'iPhone 16', platform: 'ios', class: 'phone' },
      ...(ipad ? [{ name: 'iPad Pro', platform: 'ios', class: 'tablet' }] : []),
    ],
    runtimes: [{ platform: 'ios', version: '18.4' }],
    devices: [
      ...Array.from({ length: sims }, (_, n) => sim(n + 1)),
      ...(ipad
        ? [
            {
              id: `ipad-${index}`,
              name: 'iPad Pro',
              model: 'iPad Pro',
              platform: 'ios',
              os: '18.4',
            },
          ]
        : []),
      ...(physical
        ? [
            {
              id: `0000811${index}-SOAK`,
              name: `Phone ${index}`,
              model: 'iPhone 15 Pro',
              platform: 'ios',
              os: '18.4',
              physical: true,
            },
          ]
        : []),
    ],
    bootMs: 20,
  };
}

export interface SoakFleet {
  agents: SoakAgent[];
  proxyUrl: string;
  /** A token of a user that may exec on the namespace's leases. */
  userToken: string;
  stop(): Promise<void>;
}

export async function startSoakFleet(options: {
  admin: KubeClient;
  kubeconfigPath: string;
  apiServerPort: number;
  agents: number;
  dir: string;
  /** The agents' and the proxy's SIMLOCK_LOG_LEVEL; each agent logs to agent-NAME.log in dir. */
  logLevel: string;
}): Promise<SoakFleet> {
  const { admin } = options;
  await ensureBundles();
  const proxyIdentity = `system:serviceaccount:${SYSTEM_NAMESPACE}:${PROXY_SERVICE_ACCOUNT}`;
  const tokenPath = join(options.dir, 'proxy.token');
  await writeFile(tokenPath, await proxyToken(admin, SYSTEM_NAMESPACE), { mode: 0o600 });
  const userToken = await execUser(admin);

  const networks: NetworkPartition[] = [];
  const forgetNetworks = onInterrupt(async () => {
    for (const network of networks) await network.remove();
  });
  const agents: SoakAgent[] = [];
  await inParallel(
    Array.from({ length: options.agents }, (_, index) => index),
    4,
    async (index) => {
      let partition: SoakAgent['partition'];
      if (index < PARTITIONED_AGENTS) {
        const network = await NetworkPartition.create(index, { port: options.apiServerPort });
        networks.push(network);
        partition = { network, capability: `soak-cut-${index}` };
      }
      const inspectorPort = index === options.agents - 1 ? await freePort() : undefined;
      const process = await startAgent({
        admin,
        kubeconfigPath: partition
          ? await partition.network.kubeconfigThrough(options.kubeconfigPath)
          : options.kubeconfigPath,
        name: agentName(index),
        namespace: SYSTEM_NAMESPACE,
        fleet: FLEET,
        // One that can be cut off has room beyond its two pinned requests, so the load is
        // dispatched to it too and must be re-routed when it goes away.
        script: script(index, partition ? 4 : 2),
        execAllowedIdentities: [proxyIdentity],
        runningTimeoutMs: 180_000,
        logPath: join(options.dir, `agent-${agentName(index)}.log`),
        logLevel: options.logLevel,
        ...(partition ? { commandPrefix: partition.network.commandPrefix } : {}),
        ...(inspectorPort ? { nodeArguments: [`--inspect=127.0.0.1:${inspectorPort}`] } : {}),
        // The agent's defaults (probe, refresh, health, status debounce) but for the heartbeat:
        // 10 s instead of 40, so that a worker cut off for a minute is seen gone within it.
        config: {
          probeIntervalMs: 10_000,
          refreshIntervalMs: 15_000,
          healthIntervalMs: 30_000,
          viewDebounceMs: 1000,
          heartbeat: { durationSeconds: HEARTBEAT_SECONDS, renewEverySeconds: 2 },
          // One cut off listens on its side of the pair, where the proxy reaches it.
          ...(partition
            ? {
                limits: { running: 4, platforms: { ios: { running: 4 } } },
                capabilities: [partition.capability],
                listen: { host: pairAddresses(index).inside, port: 0 },
              }
            : {}),
        },
      });
      onInterrupt(() => process.kill('SIGKILL'));
      agents.push({
        process,
        index,
        ipad: IPAD_AGENTS.includes(index),
        physical: index % 5 === 0,
        ...(partition ? { partition } : {}),
        ...(inspectorPort ? { inspectorPort } : {}),
      });
    },
  );
  agents.sort((a, b) => a.index - b.index);

  const proxyPort = await freePort();
  const proxy: ChildProcess = spawn(
    process.execPath,
    [...launchArgs('proxy'), ...localProxyArgs(options.kubeconfigPath, proxyPort, tokenPath)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, SIMLOCK_LOG_LEVEL: options.logLevel },
    },
  );
  proxy.stderr?.pipe(createWriteStream(join(options.dir, 'proxy.log'), { flags: 'a' }));
  const forgetProxy = onInterrupt(() => stopChild(proxy, 'SIGKILL'));
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  await waitUntil(
    async () => (await fetch(`${proxyUrl}/healthz`).catch(() => undefined))?.ok === true,
    60_000,
    'proxy ready',
  );
  return {
    agents,
    proxyUrl,
    userToken,
    async stop() {
      await stopChild(proxy, 'SIGTERM', 5000);
      forgetProxy();
      await Promise.all(agents.map((agent) => agent.process.kill('SIGKILL')));
      for (const network of networks) await network.remove();
      forgetNetworks();
    },
  };
}

/** A service account that may exec on the soak namespace's leases (the proxy asks RBAC). */
async function execUser(admin: KubeClient): Promise<string> {
  await allowLeaseExec(admin, {
    namespace: NAMESPACE,
    serviceAccount: USER_ACCOUNT,
    binding: 'soak-user-exec',
  });
  return serviceAccountToken(admin, NAMESPACE, USER_ACCOUNT, {
    create: true,
    expirationSeconds: 86_400,
  });
}
