// Starts one real control plane for the whole run (built by tools/controlplane on first use),
// applies crds/ with the real kubectl, starts kube-controller-manager's garbage collector (after the
// CRDs, so it watches LeaseRequests from the start), and hands every test file the kubeconfig via
// inject(). The bundles that tests start processes from are built beside the control plane's
// start (bin/launch.mjs), once, before the files run.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startControlPlane, type ControlPlane } from '../../tools/controlplane/start.js';
import { ensureBundles } from '../launch.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfigPath: string;
    controlPlaneDir: string;
    controlPlaneBin: string;
  }
}

const crdsFolder = fileURLToPath(new URL('../../crds/', import.meta.url));
let controlPlane: ControlPlane | undefined;

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const bundles = ensureBundles();
  controlPlane = await startControlPlane({ log: (line) => console.log(line) });
  await bundles;
  const kubectl = `${controlPlane.binDir}/kubectl`;
  const run = promisify(execFile);
  await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'apply',
    '--server-side',
    '-f',
    crdsFolder,
  ]);
  await run(kubectl, [
    '--kubeconfig',
    controlPlane.kubeconfigPath,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '-l',
    '',
    '--all',
  ]);
  const collector = Date.now();
  await controlPlane.startControllerManager();
  console.log(
    `control plane up with CRDs in ${Date.now() - started} ms, of which the garbage collector ${Date.now() - collector} ms (${controlPlane.dir})`,
  );
  project.provide('kubeconfigPath', controlPlane.kubeconfigPath);
  project.provide('controlPlaneDir', controlPlane.dir);
  project.provide('controlPlaneBin', controlPlane.binDir);
}

export async function teardown(): Promise<void> {
  await controlPlane?.stop();
}
