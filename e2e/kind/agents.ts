// The device hosts of the kind tier: agents with the fake driver, run on this machine as
// docs/AGENT-INSTALL.md says (a ServiceAccount per worker and a kubeconfig holding only its
// token), listening on the address the pods reach the host at.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeClient } from '../../runtime/index.js';
import { startAgent, type AgentProcess } from '../../test/cluster/agents.js';
import { freePort } from '../../tools/controlplane/start.js';
import { DEMO_WORKERS } from '../fleet/local-fleet.js';
import { must, type KindRun } from './kind.js';

export const SYSTEM_NAMESPACE = 'simlock-system';
export const PROXY_IDENTITY = `system:serviceaccount:${SYSTEM_NAMESPACE}:simlock-proxy`;

/** The worker names, and which of the demo's hosts each plays. */
export const WORKERS = [
  { name: 'mac-mini-1', demo: 'worker-a' },
  { name: 'mac-mini-2', demo: 'worker-b' },
  { name: 'android-box-1', demo: 'worker-c' },
] as const;

/** What the fake simctl answers on mac-mini-1: an exec's output and exit code come back. */
export const SIMCTL_ANSWER = { exitCode: 7, stdout: 'com.example.app\n' };

/**
 * A kubeconfig that holds only a token of `serviceAccount`, written with the commands of
 * AGENT-INSTALL.md ("A ServiceAccount and a token").
 */
export async function tokenKubeconfig(
  kind: KindRun,
  namespace: string,
  serviceAccount: string,
): Promise<string> {
  const path = join(kind.dir, `${serviceAccount}.kubeconfig`);
  const token = must(
    await kind.kubectl(['-n', namespace, 'create', 'token', serviceAccount, '--duration=24h']),
    'kubectl create token',
  ).trim();
  const server = must(
    await kind.kubectl([
      'config',
      'view',
      '--minify',
      '-o',
      'jsonpath={.clusters[0].cluster.server}',
    ]),
    'kubectl config view',
  );
  const authority = must(
    await kind.kubectl([
      'config',
      'view',
      '--raw',
      '--minify',
      '-o',
      'jsonpath={.clusters[0].cluster.certificate-authority-data}',
    ]),
    'kubectl config view --raw',
  );
  const caPath = join(kind.dir, `${serviceAccount}.ca.crt`);
  await writeFile(caPath, Buffer.from(authority, 'base64'));
  const env = { KUBECONFIG: path };
  for (const args of [
    ['set-cluster', 'simlock', `--server=${server}`, `--certificate-authority=${caPath}`],
    ['set-credentials', serviceAccount, `--token=${token}`],
    ['set-context', 'simlock', '--cluster=simlock', `--user=${serviceAccount}`],
    ['use-context', 'simlock'],
  ]) {
    if (args[0] === 'set-cluster') args.push('--embed-certs');
    must(await kind.kubectl(['config', ...args], { env }), `kubectl config ${args[0]}`);
  }
  return path;
}

/** Starts the three agents; each must reach `running` with its catalog. */
export async function startAgents(kind: KindRun, admin: KubeClient): Promise<AgentProcess[]> {
  const host = await kind.hostAddress();
  return Promise.all(
    WORKERS.map(async ({ name, demo }) => {
      const worker = DEMO_WORKERS.find((candidate) => candidate.name === demo);
      if (!worker) throw new Error(`no demo worker ${demo}`);
      const port = await freePort();
      const script =
        demo === 'worker-a'
          ? { ...worker.script, tools: { simctl: SIMCTL_ANSWER } }
          : worker.script;
      return startAgent({
        admin,
        kubeconfigPath: await tokenKubeconfig(kind, SYSTEM_NAMESPACE, `worker-${name}`),
        name,
        namespace: SYSTEM_NAMESPACE,
        fleet: 'kind',
        script,
        config: {
          ...(worker.limits ? { limits: worker.limits } : {}),
          // The exec proxy, in a pod, calls the agent here: the host's side of kind's network.
          listen: { host, port },
          endpoint: `http://${host}:${port}`,
        },
        execAllowedIdentities: [PROXY_IDENTITY],
        // Three agents start at once beside a kind node on two cores.
        runningTimeoutMs: 120_000,
      });
    }),
  );
}

export function adminClient(kind: KindRun): KubeClient {
  return KubeClient.fromOptions({ kubeconfig: kind.kubeconfig });
}
