// `npm run up`: a local simlock fleet. Starts the embedded control plane (built on first use),
// applies the CRDs, runs the controller, the exec proxy and three fake-driver agents (worker-a:
// iOS simulators; worker-b: an enrolled iPhone 15 Pro; worker-c: Android emulators and a phone),
// runs one lease, one exec and one release to show it works, then stays up until Ctrl-C.
//
//   npm run up                                 the whole local fleet
//   npm run up -- --kubeconfig ~/.kube/config  only the controller and proxy, against that cluster
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { execThroughProxy } from '../../api/index.js';
import { startConsole } from '../../console/index.js';
import { KubeClient, createLogger, isAlreadyExists } from '../../runtime/index.js';
import { startControlPlane, type ControlPlane } from '../../tools/controlplane/start.js';
import { DEMO_WORKERS, SYSTEM_NAMESPACE, startLocalFleet } from './local-fleet.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const stateDir = join(root, '.simlock', 'fleet');
const say = (line: string) => console.log(`simlock: ${line}`);

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

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
async function publishProxyUrl(admin: KubeClient, proxyUrl: string): Promise<void> {
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
  kubeconfig: string,
  binDir: string,
  proxyUrl: string,
  token: string,
): Promise<void> {
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
  console.log(lease.stdout.trim());
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
  console.log(`${output.join('').trim()}\n(exit code ${exitCode})`);
  say('demo: kubectl simlock release demo');
  const release = await run(plugin, ['release', 'demo'], { env });
  console.log(release.stdout.trim());
}

async function main(): Promise<void> {
  // The fleet's processes are started with this same binary (local-fleet.ts): one version for all.
  say(`on Node ${process.version} (${process.execPath})`);
  await mkdir(stateDir, { recursive: true });
  const externalKubeconfig = flag('kubeconfig');
  if (externalKubeconfig) {
    say(`running the controller and the proxy against the cluster in ${externalKubeconfig}`);
    const admin = KubeClient.fromOptions({ kubeconfig: externalKubeconfig });
    const fleet = await startLocalFleet({
      kubeconfigPath: externalKubeconfig,
      dir: stateDir,
      workers: [],
    });
    await publishProxyUrl(admin, fleet.proxyUrl);
    say(
      `controller ${fleet.controllerUrl}, proxy ${fleet.proxyUrl}; logs in ${stateDir}. Ctrl-C stops both.`,
    );
    const stop = () => void fleet.stop().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return;
  }

  say('starting the control plane (the first run builds it from Go modules: several minutes)');
  const controlPlane = await startControlPlane({ log: say });
  let stopFleet: () => Promise<void> = () => Promise.resolve();
  const stopAll = async () => {
    say('stopping');
    await stopFleet();
    await controlPlane.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stopAll());
  process.once('SIGTERM', () => void stopAll());

  const kubectl = join(controlPlane.binDir, 'kubectl');
  await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'apply',
    '--server-side',
    '-f',
    join(root, 'crds'),
  ]);
  await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'wait',
    '--for=condition=Established',
    'crd',
    '--all',
  ]);
  say('CRDs applied; starting the controller, the proxy and three agents');
  const fleet = await startLocalFleet({
    kubeconfigPath: controlPlane.kubeconfigPath,
    dir: stateDir,
    workers: DEMO_WORKERS,
  });
  stopFleet = () => fleet.stop();
  const admin = KubeClient.fromOptions({ kubeconfig: controlPlane.kubeconfigPath });
  await publishProxyUrl(admin, fleet.proxyUrl);
  const { kubeconfig, token } = await demoUser(admin, controlPlane);
  await writeFile(
    join(stateDir, 'env'),
    [
      `export KUBECONFIG=${kubeconfig}`,
      `export KUBECACHEDIR=${join(stateDir, 'kube-cache')}`,
      `export PATH=${join(root, 'bin')}:${controlPlane.binDir}:$PATH`,
      '',
    ].join('\n'),
  );

  // The console, as `kubectl simlock console` runs it: the demo user's kubeconfig, on 127.0.0.1.
  const consoleServer = await startConsole({
    client: KubeClient.fromOptions({ kubeconfig }),
    mode: 'local',
    log: createLogger({ component: 'console' }, 'warn'),
    proxyUrl: fleet.proxyUrl,
  });
  const stopFleetOnly = stopFleet;
  stopFleet = async () => {
    await consoleServer.stop();
    await stopFleetOnly();
  };

  try {
    await demonstrate(kubeconfig, controlPlane.binDir, fleet.proxyUrl, token);
  } catch (error) {
    say(`the demonstration failed: ${(error as Error).message}; logs in ${stateDir}`);
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
  console.log(listed.stdout);
  say(`the console: ${consoleServer.openUrl}`);
  say(`the fleet is up. In another shell:

  source ${join(stateDir, 'env')}
  kubectl simlock lease --platform ios
  kubectl get simlock -A
  kubectl simlock list --requests
  kubectl simlock console                   (another console, from your shell)

Logs: ${stateDir}/*.log. Ctrl-C stops everything.`);
}

main().catch((error: unknown) => {
  console.error(error);
  // The control plane and the fleet stop with a signal to this process; send it to ourselves.
  process.kill(process.pid, 'SIGTERM');
});
