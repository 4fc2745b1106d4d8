// The env file `npm run up` writes for a second shell (`source .simlock/fleet/env`): the demo user's
// kubeconfig, kubectl's cache, and on PATH the plugin, kubectl and the Node the fleet runs on.
// The plugin's script runs `node` from PATH; a machine whose own node is older than the plugin
// needs (Node 20, where `npm run up` itself runs on the pinned Node 24, ADR 0012) would otherwise
// fail every command of the README's second shell.
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

export interface FleetEnv {
  /** The demo user's kubeconfig (a bearer token, which the exec proxy reviews). */
  kubeconfig: string;
  /** The control plane's binaries: kubectl. */
  kubectlDir: string;
  /** The node binary the plugin is to run on; default the one running this. */
  node?: string;
}

/** One word for sh, whatever the path holds. */
function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Writes `<stateDir>/env` and answers its path. The Node goes on PATH through a folder that holds
 * only a `node` link (`<stateDir>/node`), so that it shadows nothing else of the shell's PATH.
 */
export async function writeFleetEnv(stateDir: string, env: FleetEnv): Promise<string> {
  const nodeDir = join(stateDir, 'node');
  await mkdir(nodeDir, { recursive: true });
  // A link made aside and renamed over, so that a shell sourcing the file meanwhile finds one.
  const aside = join(nodeDir, `node.${process.pid}`);
  await rm(aside, { force: true });
  await symlink(env.node ?? process.execPath, aside);
  await rename(aside, join(nodeDir, 'node'));

  const path = join(stateDir, 'env');
  await writeFile(
    path,
    [
      `export KUBECONFIG=${quote(env.kubeconfig)}`,
      `export KUBECACHEDIR=${quote(join(stateDir, 'kube-cache'))}`,
      `export PATH=${quote([nodeDir, join(root, 'bin'), env.kubectlDir].join(':'))}:"$PATH"`,
      '',
    ].join('\n'),
  );
  return path;
}
