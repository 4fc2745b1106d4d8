// The Node.js binaries of a release (tools/release/platforms.ts pins each one's version and npm's
// integrity), as the npm registry serves them: `npm pack node-<platform>@<version>`, the tarball
// checked against the pinned integrity as tools/ensure-node.sh checks its own, its bin/node and
// LICENSE kept in a cache outside the repository. A binary for another platform is only copied
// into the release, never run; the build machine's own Node of the pinned version comes from
// tools/ensure-node.sh.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hostPlatform, nodePackageIntegrity, type Platform } from './platforms.js';

/** NODE_VERSION of tools/node-versions.env. */
export function pinnedNodeVersion(root: string): string {
  return nodeVersionsEnv(root, 'NODE_VERSION');
}

/** A value of tools/node-versions.env. */
export function nodeVersionsEnv(root: string, key: string): string {
  const env = readFileSync(join(root, 'tools', 'node-versions.env'), 'utf8');
  const value = new RegExp(`^${key}=(\\S+)$`, 'm').exec(env)?.[1];
  if (!value) throw new Error(`tools/node-versions.env has no ${key}`);
  return value;
}

export function simlockCache(): string {
  return (
    process.env.SIMLOCK_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'simlock')
  );
}

/**
 * The path of bin/node of node-<node>@<version> (Node's LICENSE two folders up), downloaded into
 * the cache when missing and checked against its pinned integrity.
 */
export function nodeBinary(
  root: string,
  node: Platform['node'],
  version: string,
  log: (line: string) => void,
): string {
  if (node === hostPlatform()?.node && version === pinnedNodeVersion(root)) {
    const bin = execFileSync(join(root, 'tools', 'ensure-node.sh'), ['24'], { encoding: 'utf8' });
    return join(bin.trim(), 'node');
  }
  const integrity = nodePackageIntegrity(node, version);
  const folder = join(simlockCache(), 'release', 'node', `${version}-${node}`);
  const binary = join(folder, 'bin', 'node');
  if (existsSync(binary)) return binary;
  log(`downloading Node ${version} (${node}) from the npm registry`);
  mkdirSync(join(simlockCache(), 'release', 'node'), { recursive: true });
  const work = mkdtempSync(join(simlockCache(), 'release', 'node', 'download.'));
  try {
    execFileSync('npm', ['pack', `node-${node}@${version}`, '--silent'], {
      cwd: work,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tarball = join(work, `node-${node}-${version}.tgz`);
    const actual = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (actual !== integrity) {
      throw new Error(`node-${node}@${version} has integrity ${actual}, pinned ${integrity}`);
    }
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
  if (!existsSync(binary)) throw new Error(`node-${node}@${version} holds no bin/node`);
  return binary;
}

/**
 * The bin/node of Node's own build for this machine, unpacked in `folder` (nodejs.org's
 * node-v<version>-<platform>.tar.gz, whose download the caller has checked against Node's signed
 * SHASUMS256.txt: the release workflow's macOS jobs), with its LICENSE beside bin/; refused unless
 * it runs here as the pinned version. The npm registry lacks Node 24 for darwin-arm64 and serves
 * an older one for darwin-x64 (platforms.ts), so the released darwin binaries are made from it.
 */
export function officialNodeBinary(
  root: string,
  folder: string,
): { node: string; platform: Platform } {
  const node = join(folder, 'bin', 'node');
  if (!existsSync(node) || !existsSync(join(folder, 'LICENSE'))) {
    throw new Error(`--official-node: ${folder} has no bin/node and LICENSE (an unpacked Node)`);
  }
  const pinned = `v${pinnedNodeVersion(root)}`;
  const [version, platform] = execFileSync(
    node,
    ['-p', 'process.version + " " + process.platform + "-" + process.arch'],
    { encoding: 'utf8' },
  )
    .trim()
    .split(' ');
  const host = hostPlatform();
  if (version !== pinned || !host || platform !== host.node) {
    throw new Error(
      `--official-node: ${node} is Node ${version} for ${platform}; the release needs ${pinned} (tools/node-versions.env) for this machine, ${process.platform}-${process.arch}`,
    );
  }
  return { node, platform: host };
}
