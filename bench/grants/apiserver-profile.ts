// A Go CPU profile of kube-apiserver (its /debug/pprof, on by default) taken while a side runs,
// to see where the API server's time per grant goes (`go tool pprof -top -cum FILE`).
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ControlPlane } from '../../tools/index.js';

/** Starts a profile of `profileSeconds`; the answer resolves to the file written (or an error). */
export function profileApiServer(
  controlPlane: ControlPlane,
  profileSeconds: number,
  path: string,
): Promise<string> {
  const kubectl = join(controlPlane.binDir, 'kubectl');
  return promisify(execFile)(
    kubectl,
    [
      '--kubeconfig',
      controlPlane.kubeconfigPath,
      'get',
      '--raw',
      `/debug/pprof/profile?seconds=${profileSeconds}`,
      `--request-timeout=${profileSeconds + 30}s`,
    ],
    { encoding: 'buffer', maxBuffer: 1 << 28 },
  ).then(async ({ stdout }) => {
    await writeFile(path, stdout);
    return path;
  });
}
