// npm run release [-- flags]: the files of one release in .simlock/release/<version>/ (git-ignored;
// not dist/, which `npm pack` empties and ships):
//   kubectl-simlock-<os>-<arch>.tar.gz   the plugin as one executable per platform (no Node needed):
//                                        linux-amd64, linux-arm64 and darwin-amd64 (unsigned) built
//                                        here; darwin-arm64 and darwin-amd64 signed ad hoc only from
//                                        a Mac (--darwin-archives; the end says NOT BUILT darwin-arm64
//                                        without it: platforms.ts says why)
//   simlock.yaml                         the krew manifest, filled in from those archives
//   simlock-<version>.tgz                the Helm chart (version, appVersion and image tag pinned)
//   simlock-crds-<version>.yaml          the CRDs in one file
//   client/simlock-<version>.tgz         the typed client's npm package (npm pack)
//   simlock-image-<version>.tar          with --image: the image, `docker save`d
//   SHA256SUMS                           every file above
//
// Flags:
//   --platforms linux-x64,darwin-x64     only these binaries (default: every one with a Node on the
//                                        npm registry, but those --darwin-archives gives)
//   --darwin-archives DIR                the darwin archives built and signed on macOS runners (the
//                                        release workflow's darwin job): checked, then taken into the
//                                        release (darwin-archives.ts), not built here
//   --official-node DIR                  on a Mac: build this machine's binary from nodejs.org's Node
//                                        of the pinned version, unpacked in DIR (its SHASUMS256.txt
//                                        checked by the caller), signed ad hoc (the workflow's darwin job)
//   --only plugin,chart,crds,client      only these parts (default: all but the image)
//   --image                              also build and save the image (needs docker)
//   --node-image IMAGE                   the Dockerfile's NODE_IMAGE (default node:24-slim)
//   --host-network                       docker build on the host's network, as the kind tier does
//   --image-tag NAME:TAG                 instead of simlock:<version>
//   --complete                           fail unless the manifest has every platform's checksum,
//                                        darwin-arm64's included
//   --helm PATH                          this helm instead of the pinned one of tools/controlplane
//   --owner NAME                         the GitHub owner in the manifest (default: $GITHUB_REPOSITORY_OWNER, else OWNER)
//   --out DIR                            instead of .simlock/release/<version>
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { packageChart, packClient, saveImage, writeCrds } from './artifacts.js';
import { sha256 } from './archive.js';
import { takeDarwinArchives } from './darwin-archives.js';
import { fillKrewManifest } from './krew-manifest.js';
import { officialNodeBinary } from './node-binary.js';
import { archiveName, choosePlatforms, platformNamed, type Platform } from './platforms.js';
import { releasePlugin } from './plugin-release.js';

const PARTS = ['plugin', 'chart', 'crds', 'client'] as const;

const root = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    platforms: { type: 'string', default: '' },
    only: { type: 'string', default: PARTS.join(',') },
    image: { type: 'boolean', default: false },
    'node-image': { type: 'string' },
    'host-network': { type: 'boolean', default: false },
    'image-tag': { type: 'string' },
    helm: { type: 'string' },
    complete: { type: 'boolean', default: false },
    'darwin-archives': { type: 'string' },
    'official-node': { type: 'string' },
    owner: { type: 'string', default: process.env.GITHUB_REPOSITORY_OWNER ?? 'OWNER' },
    out: { type: 'string' },
  },
});
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
};
const parts = values.only.split(',').filter(Boolean);
for (const part of parts) {
  if (!(PARTS as readonly string[]).includes(part)) {
    throw new Error(`--only: no part ${part} (${PARTS.join(', ')})`);
  }
}
const outDir = values.out ?? join(root, '.simlock', 'release', version);
mkdirSync(outDir, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'simlock-release-'));
const log = (line: string) => console.error(`release: ${line}`);
const started = Date.now();
const caveats: string[] = [];

try {
  const taken: Platform[] = [];
  if (values['darwin-archives']) {
    taken.push(...takeDarwinArchives(values['darwin-archives'], outDir, work));
    log(`${taken.map(archiveName).join(', ')}: signed on macOS, checked and taken`);
  }
  if (parts.includes('plugin')) {
    const { platforms, officialNode } = pluginPlatforms(taken);
    const built = await releasePlugin(root, platforms, outDir, work, log, officialNode);
    caveats.push(
      ...built.flatMap(({ platform, caveat }) => (caveat ? [`${platform.node}: ${caveat}`] : [])),
    );
  }
  // The manifest takes every archive in the folder, so archives built on several machines (the
  // linux-arm64 one on its own runner, the darwin ones taken above) fill one manifest once they
  // are gathered.
  const checksums = new Map(
    readdirSync(outDir)
      .filter((name) => /^kubectl-simlock-\w+-\w+\.tar\.gz$/.test(name))
      .map((name) => [name, sha256(join(outDir, name))] as const),
  );
  if (checksums.size > 0) {
    const { text, unfilled, omitted } = fillKrewManifest(root, {
      version,
      owner: values.owner,
      checksums,
    });
    writeFileSync(join(outDir, 'simlock.yaml'), text);
    const missing = [...unfilled, ...omitted.map(archiveName)];
    if (missing.length > 0 && values.complete) {
      throw new Error(`--complete: no archive for ${missing.join(', ')} in ${outDir}`);
    }
    caveats.push(
      ...omitted.map(
        ({ node, missing: why }) =>
          `NOT BUILT ${node} (left out of simlock.yaml): ${why ?? 'no Node'}`,
      ),
    );
    if (unfilled.length > 0)
      caveats.push(
        `simlock.yaml: no archive yet for ${unfilled.join(', ')} (checksum left all zeros)`,
      );
  }
  if (parts.includes('crds')) log(relative(root, writeCrds(root, outDir, version)));
  if (parts.includes('chart')) {
    const helm =
      values.helm ??
      join(
        execFileSync(join(root, 'tools', 'controlplane', 'build.sh'), {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        }).trim(),
        'helm',
      );
    log(relative(root, packageChart(root, helm, outDir, version, work)));
  }
  if (parts.includes('client')) {
    const clientDir = join(outDir, 'client');
    mkdirSync(clientDir, { recursive: true });
    log(relative(root, packClient(root, clientDir)));
  }
  if (values.image) {
    const image = await saveImage(root, outDir, {
      tag: values['image-tag'] ?? `simlock:${version}`,
      ...(values['node-image'] ? { nodeImage: values['node-image'] } : {}),
      hostNetwork: values['host-network'],
    });
    log(relative(root, image));
  }
  writeChecksums(outDir);
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s: ${relative(root, outDir)}`);
  for (const caveat of caveats) log(caveat.startsWith('NOT BUILT') ? caveat : `NOTE ${caveat}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * The platforms whose binaries this run builds: with --official-node, this machine's alone, from
 * that Node; otherwise those --platforms names (every one the registry has a Node for when it
 * names none), but never one --darwin-archives gave.
 */
function pluginPlatforms(taken: readonly Platform[]): {
  platforms: Platform[];
  officialNode?: string;
} {
  const names = values.platforms.split(',').filter(Boolean);
  if (values['official-node']) {
    const { node, platform } = officialNodeBinary(root, values['official-node']);
    const others = names.map(platformNamed).filter((named) => named !== platform);
    if (others.length > 0) {
      throw new Error(
        `--official-node builds this machine's ${platform.node} only, not ${others.map((other) => other.node).join(', ')}`,
      );
    }
    return { platforms: [platform], officialNode: node };
  }
  const chosen = choosePlatforms(names);
  const both = chosen.filter((platform) => taken.includes(platform));
  if (names.length > 0 && both.length > 0) {
    throw new Error(
      `${both.map(({ node }) => node).join(', ')}: named by --platforms and given by --darwin-archives`,
    );
  }
  return { platforms: chosen.filter((platform) => !taken.includes(platform)) };
}

/** SHA256SUMS in `sha256sum -c` format, over every file of the release (client/ included). */
function writeChecksums(folder: string): void {
  const lines: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (basename(path) !== 'SHA256SUMS')
        lines.push(`${sha256(path)}  ${relative(folder, path)}`);
    }
  };
  walk(folder);
  writeFileSync(join(folder, 'SHA256SUMS'), `${lines.join('\n')}\n`);
}
