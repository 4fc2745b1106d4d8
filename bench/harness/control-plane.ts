// A control plane of the benchmark's own: etcd and kube-apiserver with the CRDs applied and their
// storage ready to watch, stopped when the benchmark is interrupted.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeClient, isAlreadyExists } from '../../runtime/index.js';
import { startControlPlane, type ControlPlane } from '../../tools/index.js';
import { onInterrupt } from './interrupt.js';
import { REPO_ROOT } from './paths.js';
import { log } from './progress.js';
import { waitUntil } from './wait-until.js';

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
    await applyCrds(controlPlane, join(REPO_ROOT, 'crds'));
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

/** Applies the CRDs of a folder (kubectl, server-side) and waits until every CRD is established. */
export async function applyCrds(controlPlane: ControlPlane, folder: string): Promise<void> {
  const run = promisify(execFile);
  const kubectl = join(controlPlane.binDir, 'kubectl');
  const kubeconfig = ['--kubeconfig', controlPlane.kubeconfigPath];
  await run(kubectl, [...kubeconfig, 'apply', '--server-side', '-f', folder], {
    maxBuffer: 1 << 22,
  });
  await run(kubectl, [
    ...kubeconfig,
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd',
    '--all',
  ]);
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
