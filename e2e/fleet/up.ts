// `npm run up`: a local simlock fleet. Starts the embedded control plane (built on first use),
// applies the CRDs, runs the controller, the exec proxy and three fake-driver agents (worker-a:
// iOS simulators; worker-b: an enrolled iPhone 15 Pro; worker-c: Android emulators and a phone),
// runs one lease, one exec and one release to show it works, then stays up until Ctrl-C
// (demo.ts). It writes .simlock/fleet/env for a second shell (env-file.ts).
//
//   npm run up                                 the whole local fleet
//   npm run up -- --kubeconfig ~/.kube/config  only the controller and proxy, against that cluster
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../runtime/index.js';
import { publishProxyUrl, startDemoFleet } from './demo.js';
import { startLocalFleet } from './local-fleet.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const stateDir = join(root, '.simlock', 'fleet');
const say = (line: string) => console.log(`simlock: ${line}`);

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function againstCluster(kubeconfig: string): Promise<void> {
  say(`on Node ${process.version} (${process.execPath})`);
  say(`running the controller and the proxy against the cluster in ${kubeconfig}`);
  await mkdir(stateDir, { recursive: true });
  const admin = KubeClient.fromOptions({ kubeconfig });
  const fleet = await startLocalFleet({ kubeconfigPath: kubeconfig, dir: stateDir, workers: [] });
  await publishProxyUrl(admin, fleet.proxyUrl);
  say(
    `controller ${fleet.controllerUrl}, proxy ${fleet.proxyUrl}; logs in ${stateDir}. Ctrl-C stops both.`,
  );
  const stop = () => void fleet.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

async function main(): Promise<void> {
  const externalKubeconfig = flag('kubeconfig');
  if (externalKubeconfig) return againstCluster(externalKubeconfig);

  // What has started so far, stopped last-started first on Ctrl-C, even during startup.
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    say('stopping');
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', () => void stopAll());
  process.once('SIGTERM', () => void stopAll());
  await startDemoFleet({
    stateDir,
    print: (lines) => console.log(lines),
    onStarted: (stop) => stops.push(stop),
  });
}

main().catch((error: unknown) => {
  console.error(error);
  // The control plane and the fleet stop with a signal to this process; send it to ourselves.
  process.kill(process.pid, 'SIGTERM');
});
