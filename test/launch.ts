// How tests start simlock's processes: `node bin/launch.mjs COMPONENT args`, from the bundles a
// user's process runs (the cluster tier's global setup builds them once per source change).
import { fileURLToPath } from 'node:url';

export const LAUNCHER = fileURLToPath(new URL('../bin/launch.mjs', import.meta.url));

export type Component = 'controller' | 'agent' | 'proxy' | 'console' | 'kubectl-simlock';

/** The arguments after `node` that start a component with these flags. */
export function launchArgs(component: Component, args: readonly string[] = []): string[] {
  return [LAUNCHER, component, ...args];
}

/**
 * Builds the bundles when the sources changed since the last build, before processes start many
 * at a time (each would otherwise build them once). The plugin's --help is the cheapest start.
 */
export async function ensureBundles(): Promise<void> {
  const { execFile } = await import('node:child_process');
  await new Promise<void>((resolve, reject) =>
    execFile(process.execPath, launchArgs('kubectl-simlock', ['--help']), (error, _out, err) =>
      error ? reject(new Error(`building the bundles failed: ${err || error.message}`)) : resolve(),
    ),
  );
}
