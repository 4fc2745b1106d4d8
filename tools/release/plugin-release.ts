// The plugin's part of a release: one single binary per platform, its archive, and (for tests
// and the start-time benchmark) the host's binary alone, cached by a hash of what goes into it.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { writeArchive } from './archive.js';
import { nodeBinary, pinnedNodeVersion, simlockCache } from './node-binary.js';
import { hostPlatform, type Platform } from './platforms.js';
import {
  buildPluginScript,
  buildSeaBlob,
  hasCodesign,
  injectBlob,
  signForMac,
} from './plugin-binary.js';

export interface BuiltPlatform {
  platform: Platform;
  archive: string;
  /** Said plainly when a platform's binary is not what a user can run as it is. */
  caveat?: string;
}

/**
 * Builds the binaries and archives of `platforms` into `outDir`; `work` is scratch space. Each
 * binary is its platform's pinned Node with a blob made by this machine's Node of the same
 * version (Node's rule for blobs), with V8's code cache only when the two are one platform.
 * With `officialNode` (nodejs.org's bin/node of the pinned version for this machine, checked by
 * `officialNodeBinary`), this machine's binary is made from it and its blob by it, instead of the
 * npm registry's package: how the release workflow's macOS jobs build the darwin binaries.
 */
export async function releasePlugin(
  root: string,
  platforms: readonly Platform[],
  outDir: string,
  work: string,
  log: (line: string) => void,
  officialNode?: string,
): Promise<BuiltPlatform[]> {
  const host = hostPlatform();
  if (!host)
    throw new Error(`no release platform for this machine (${process.platform}-${process.arch})`);
  const script = join(work, 'kubectl-simlock.cjs');
  await buildPluginScript(root, script);
  const pinned = pinnedNodeVersion(root);
  const nodes = (platform: Platform) => {
    if (officialNode && platform.node === host.node) {
      return { version: pinned, node: officialNode, blobMaker: officialNode };
    }
    const version = platform.nodeVersion;
    if (version === null) throw new Error(`${platform.node}: ${platform.missing ?? 'no Node'}`);
    return {
      version,
      node: nodeBinary(root, platform.node, version, log),
      blobMaker: nodeBinary(root, host.node, version, log),
    };
  };
  const built: BuiltPlatform[] = [];
  for (const platform of platforms) {
    const { version, node, blobMaker } = nodes(platform);
    const binary = join(work, platform.node, 'kubectl-simlock');
    const native = platform.node === host.node;
    await injectBlob(node, buildSeaBlob(blobMaker, script, work, native), platform, binary);
    const caveats: string[] = [];
    if (version !== pinned) {
      caveats.push(
        `Node ${version} inside, not the pinned ${pinned}: the newest node-${platform.node} of Node 24 the npm registry serves`,
      );
    }
    if (!native) {
      caveats.push(
        `built on ${host.node}: no code cache in its blob, so each start compiles the script (build it on its own platform for the faster start)`,
      );
    }
    if (platform.os === 'darwin') {
      if (hasCodesign()) signForMac(binary);
      else {
        caveats.push(
          "NOT SIGNED: the injection drops Node's signature (postject removes its LC_CODE_SIGNATURE) and there is no codesign on this machine to sign it ad hoc; an Intel Mac may still run an unsigned binary, which was not checked here: sign it on a Mac (`codesign --sign - --force kubectl-simlock`), or build it there from nodejs.org's Node with --official-node, as the release workflow's macOS jobs do",
        );
      }
    }
    const caveat = caveats.length > 0 ? caveats.join('; ') : undefined;
    const archive = writeArchive(binary, join(node, '..', '..', 'LICENSE'), platform, outDir, work);
    built.push({ platform, archive, ...(caveat ? { caveat } : {}) });
    log(`${relative(root, archive)}${caveat ? ` (${caveat})` : ''}`);
  }
  return built;
}

const STAMPED_FOLDERS = ['api', 'runtime', 'client', 'cli'];

/** A hash of the contents of everything the plugin's binary is made from. */
export function pluginBinaryStamp(root: string): string {
  const hash = createHash('sha256');
  const add = (file: string) => hash.update(`${relative(root, file)}\0`).update(readFileSync(file));
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'testdata') walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) add(path);
    }
  };
  for (const folder of STAMPED_FOLDERS) walk(join(root, folder));
  walk(join(root, 'tools', 'release'));
  add(join(root, 'package-lock.json'));
  hash.update(pinnedNodeVersion(root));
  return hash.digest('hex').slice(0, 16);
}

/**
 * The host's single binary (`codeCache: false`: as one built on another platform would start),
 * built once per stamp into ~/.cache/simlock/release/plugin/<stamp>/
 * (tests and the start-time benchmark run it). Concurrent callers each build aside and rename.
 */
export async function hostPluginBinary(
  root: string,
  log: (line: string) => void,
  options: { codeCache?: boolean } = {},
): Promise<{ binary: string; builtInMs?: number }> {
  const codeCache = options.codeCache ?? true;
  const host = hostPlatform();
  if (!host)
    throw new Error(`no release platform for this machine (${process.platform}-${process.arch})`);
  const stamp = pluginBinaryStamp(root);
  const folder = join(simlockCache(), 'release', 'plugin', codeCache ? stamp : `${stamp}-portable`);
  const binary = join(folder, 'kubectl-simlock');
  if (existsSync(binary)) return { binary };
  const started = Date.now();
  mkdirSync(join(folder, '..'), { recursive: true });
  const work = mkdtempSync(`${folder}.building-`);
  try {
    const script = join(work, 'kubectl-simlock.cjs');
    await buildPluginScript(root, script);
    const node = nodeBinary(root, host.node, pinnedNodeVersion(root), log);
    await injectBlob(
      node,
      buildSeaBlob(node, script, work, codeCache),
      host,
      join(work, 'out', 'kubectl-simlock'),
    );
    try {
      renameSync(join(work, 'out'), folder);
    } catch {
      // Another caller built the same stamp first: its binary is the same.
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { binary, builtInMs: Date.now() - started };
}
