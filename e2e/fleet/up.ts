// `npm run up`: a local simlock fleet on this machine. Starts the embedded control plane (built on
// first use), applies the CRDs, and stays up until Ctrl-C, then stops everything it started.
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startControlPlane } from '../../tools/controlplane/start.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const stateDir = `${root}.simlock/fleet`;

async function main(): Promise<void> {
  console.log('simlock: starting the control plane (the first run builds it: many minutes)');
  await mkdir(stateDir, { recursive: true });
  const controlPlane = await startControlPlane({ log: (line) => console.log(`simlock: ${line}`) });
  const kubectl = `${controlPlane.binDir}/kubectl`;
  const stopAll = async () => {
    console.log('simlock: stopping');
    await controlPlane.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stopAll());
  process.once('SIGTERM', () => void stopAll());

  await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'apply',
    '--server-side',
    '-f',
    `${root}crds`,
  ]);
  await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'wait',
    '--for=condition=Established',
    'crd',
    '--all',
  ]);
  const { stdout } = await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'get',
    'crd',
  ]);
  console.log(stdout);
  console.log(`simlock: the fleet is up. In another shell:

  export KUBECONFIG=${controlPlane.kubeconfigPath}
  export PATH=${controlPlane.binDir}:$PATH
  kubectl get simlock -A

Ctrl-C stops everything.`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
