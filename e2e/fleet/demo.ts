// The demo fleet of `npm run up`: the embedded control plane with the CRDs, the controller, the
// exec proxy and three fake-driver agents (DEMO_WORKERS), a demo user, the env file for a second
// shell and the console; then one lease, one exec and one release to show it works. up.ts runs it
// for people; e2e/fleet/docs.test.ts runs the same to replay the docs against it.
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startConsole } from '../../console/index.js';
import {
  KubeClient,
  createLogger,
  execThroughProxy,
  isAlreadyExists,
} from '../../runtime/index.js';
import { startControlPlane, type ControlPlane } from '../../tools/controlplane/start.js';
import { writeFleetEnv } from './env-file.js';
import { DEMO_WORKERS, SYSTEM_NAMESPACE, startLocalFleet } from './local-fleet.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** A kubeconfig for a demo user with a bearer token (the exec proxy reviews tokens). */
async function demoUser(
  admin: KubeClient,
  controlPlane: ControlPlane,
): Promise<{ kubeconfig: string; token: string }> {
  const create = async (path: string, body: unknown) => {
    try {
      await admin.create(path, body);
    } catch (error) {
      if (!isAlreadyExists(error)) throw error;
    }
  };
  await create('/api/v1/namespaces/default/serviceaccounts', {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'simlock-demo' },
  });
  await create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'simlock-demo-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: 'simlock-demo', namespace: 'default' }],
  });
  const answer = (await admin.create(
    '/api/v1/namespaces/default/serviceaccounts/simlock-demo/token',
    {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 86_400 },
    },
  )) as { status: { token: string } };
  const identity = await controlPlane.kubeconfigForToken('simlock-demo', answer.status.token);
  return { kubeconfig: identity.kubeconfigPath, token: answer.status.token };
}

/** Where the plugin finds the proxy: a ConfigMap the chart writes too. */
export async function publishProxyUrl(admin: KubeClient, proxyUrl: string): Promise<void> {
  const body = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'simlock', namespace: SYSTEM_NAMESPACE },
    data: { proxyUrl },
  };
  try {
    await admin.create(`/api/v1/namespaces/${SYSTEM_NAMESPACE}/configmaps`, body);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    await admin.replace(`/api/v1/namespaces/${SYSTEM_NAMESPACE}/configmaps/simlock`, body);
  }
}

async function demonstrate(
  print: (line: string) => void,
  kubeconfig: string,
  binDir: string,
  proxyUrl: string,
  token: string,
): Promise<void> {
  const say = (line: string) => print(`simlock: ${line}`);
  const plugin = join(root, 'bin', 'kubectl-simlock');
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    PATH: `${join(root, 'bin')}:${binDir}:${process.env.PATH ?? ''}`,
  };
  say('demo: kubectl simlock lease --platform ios --device "iPhone 16" --name demo');
  const lease = await run(
    plugin,
    ['lease', '--platform', 'ios', '--device', 'iPhone 16', '--name', 'demo', '--holder', 'demo'],
    { env },
  );
  print(lease.stdout.trim());
  say('demo: exec simctl listapps on the leased simulator, through the proxy');
  const output: string[] = [];
  const { exitCode } = await execThroughProxy({
    url: proxyUrl,
    token,
    namespace: 'default',
    lease: 'demo',
    tool: 'simctl',
    args: ['listapps'],
    onOutput: (_stream, data) => output.push(data),
  });
  print(`${output.join('').trim()}\n(exit code ${exitCode})`);
  say('demo: kubectl simlock release demo');
  const release = await run(plugin, ['release', 'demo'], { env });
  print(release.stdout.trim());
}

export interface DemoFleetOptions {
  /** Config files, tokens, logs and the env file: `.simlock/fleet` for `npm run up`. */
  stateDir: string;
  /** What `npm run up` prints, one or more lines at a time. */
  print: (lines: string) => void;
  /**
   * Called with a stop for each part as it starts (console, fleet, control plane), so that a
   * signal during startup stops what runs so far: run them in the reverse order.
   */
  onStarted: (stop: () => Promise<void>) => void;
}

export interface DemoFleet {
  controlPlane: ControlPlane;
  /** The env file a second shell sources. */
  envPath: string;
  /** The demo user's kubeconfig (the env file's KUBECONFIG). */
  kubeconfig: string;
}

/** A path as the person at this shell would type it: relative when under the current folder. */
function shown(path: string): string {
  const under = relative(process.cwd(), path);
  return under.startsWith('..') || under === '' ? path : under;
}

export async function startDemoFleet(options: DemoFleetOptions): Promise<DemoFleet> {
  const { print, stateDir } = options;
  const say = (line: string) => print(`simlock: ${line}`);
  // The fleet's processes are started with this same binary (local-fleet.ts): one version for all.
  say(`on Node ${process.version} (${process.execPath})`);
  await mkdir(stateDir, { recursive: true });
  say('starting the control plane (the first run builds it from Go modules: several minutes)');
  const controlPlane = await startControlPlane({ log: say });
  options.onStarted(() => controlPlane.stop());

  const kubectl = join(controlPlane.binDir, 'kubectl');
  const admin = ['--kubeconfig', controlPlane.kubeconfigPath];
  await run(kubectl, [...admin, 'apply', '--server-side', '-f', join(root, 'crds')]);
  await run(kubectl, [...admin, 'wait', '--for=condition=Established', 'crd', '--all']);
  say('CRDs applied; starting the controller, the proxy and three agents');
  const fleet = await startLocalFleet({
    kubeconfigPath: controlPlane.kubeconfigPath,
    dir: stateDir,
    workers: DEMO_WORKERS,
  });
  options.onStarted(() => fleet.stop());
  const adminClient = KubeClient.fromOptions({ kubeconfig: controlPlane.kubeconfigPath });
  await publishProxyUrl(adminClient, fleet.proxyUrl);
  const { kubeconfig, token } = await demoUser(adminClient, controlPlane);
  const envPath = await writeFleetEnv(stateDir, { kubeconfig, kubectlDir: controlPlane.binDir });

  // The console, as `kubectl simlock console` runs it: the demo user's kubeconfig, on 127.0.0.1.
  const consoleServer = await startConsole({
    client: KubeClient.fromOptions({ kubeconfig }),
    mode: 'local',
    log: createLogger({ component: 'console' }, 'warn'),
    proxyUrl: fleet.proxyUrl,
  });
  options.onStarted(() => consoleServer.stop());

  try {
    await demonstrate(print, kubeconfig, controlPlane.binDir, fleet.proxyUrl, token);
  } catch (error) {
    say(`the demonstration failed: ${(error as Error).message}; logs in ${shown(stateDir)}`);
  }

  const listed = await run(kubectl, [
    '--kubeconfig',
    kubeconfig,
    '--cache-dir',
    join(stateDir, 'kube-cache'),
    'get',
    'simlock',
    '-A',
  ]).catch((error: { stderr?: string }) => ({ stdout: error.stderr ?? '' }));
  print(listed.stdout);
  say(`the console: ${consoleServer.openUrl}`);
  say(`the fleet is up. In another shell:

  source ${shown(envPath)}
  kubectl simlock lease --platform ios
  kubectl get simlock -A
  kubectl simlock list --requests
  kubectl simlock console                   (another console, from your shell)

Logs: ${shown(stateDir)}/*.log. Ctrl-C stops everything.`);
  return { controlPlane, envPath, kubeconfig };
}
