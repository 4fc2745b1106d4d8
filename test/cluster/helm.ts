// The real helm (built with the control plane, so it assumes the server's Kubernetes version), run
// against the test control plane with its own cache and config folders: a test never reads or
// writes the developer's ~/.config/helm.
import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCommand, type CommandResult } from './harness.js';

/** The chart in this repository. */
export const chartPath = fileURLToPath(new URL('../../charts/simlock', import.meta.url));

let home: Promise<string> | undefined;

function helmHome(): Promise<string> {
  home ??= (async () => {
    const dir = join(
      inject('controlPlaneDir'),
      `helm-${process.pid}-${randomBytes(3).toString('hex')}`,
    );
    await mkdir(dir, { recursive: true });
    return dir;
  })();
  return home;
}

/** Runs helm with the admin kubeconfig (or `kubeconfig`); answers stdout, stderr and exit code. */
export async function helm(
  args: string[],
  options: { kubeconfig?: string; timeoutMs?: number } = {},
): Promise<CommandResult> {
  const dir = await helmHome();
  return runCommand(`${inject('controlPlaneBin')}/helm`, args, {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dir,
      KUBECONFIG: options.kubeconfig ?? inject('kubeconfigPath'),
      HELM_CACHE_HOME: join(dir, 'cache'),
      HELM_CONFIG_HOME: join(dir, 'config'),
      HELM_DATA_HOME: join(dir, 'data'),
    },
    timeoutMs: options.timeoutMs ?? 120_000,
  });
}

/** A Kubernetes object as rendered or served; the fields tests read. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** The objects of a multi-document YAML stream (helm template, helm get manifest). */
export function parseManifests(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((document) => {
      const [error] = document.errors;
      if (error) throw error;
      return document.toJS() as KubeObject | null;
    })
    .filter((object): object is KubeObject => object !== null && typeof object === 'object');
}
