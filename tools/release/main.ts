// npm run release [-- flags]: the files of one release in .simlock/release/<version>/ (git-ignored;
// not dist/, which `npm pack` empties and ships):
//   kubectl-simlock-<os>-<arch>.tar.gz   the plugin as one executable per platform (no Node needed):
//                                        linux-amd64, linux-arm64, darwin-amd64; none for
//                                        darwin-arm64 (platforms.ts says why; the end says so)
//   simlock.yaml                         the krew manifest, filled in from those archives
//   simlock-<version>.tgz                the Helm chart (version, appVersion and image tag pinned)
//   simlock-crds-<version>.yaml          the CRDs in one file
//   client/simlock-<version>.tgz         the typed client's npm package (npm pack)
//   simlock-image-<version>.tar          with --image: the image, `docker save`d
//   SHA256SUMS                           every file above
//
// Flags:
//   --platforms linux-x64,darwin-x64     only these binaries (default: every one with a Node)
//   --only plugin,chart,crds,client      only these parts (default: all but the image)
//   --image                              also build and save the image (needs docker)
//   --node-image IMAGE                   the Dockerfile's NODE_IMAGE (default node:24-slim)
//   --host-network                       docker build on the host's network, as the kind tier does
//   --image-tag NAME:TAG                 instead of simlock:<version>
//   --complete                           fail unless the manifest has every platform's checksum
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
import { fillKrewManifest } from './krew-manifest.js';
import { choosePlatforms, PLATFORMS } from './platforms.js';
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
  if (parts.includes('plugin')) {
    const platforms = choosePlatforms(values.platforms.split(',').filter(Boolean));
    const built = await releasePlugin(root, platforms, outDir, work, log);
    caveats.push(
      ...built.flatMap(({ platform, caveat }) => (caveat ? [`${platform.node}: ${caveat}`] : [])),
      ...PLATFORMS.filter(({ nodeVersion }) => nodeVersion === null).map(
        ({ node, missing }) => `NOT BUILT ${node}: ${missing ?? 'no Node'}`,
      ),
    );
  }
  // The manifest takes every archive in the folder, so archives built on several machines (the
  // macOS ones on a Mac, to be signed) fill one manifest once they are gathered.
  const checksums = new Map(
    readdirSync(outDir)
      .filter((name) => /^kubectl-simlock-\w+-\w+\.tar\.gz$/.test(name))
      .map((name) => [name, sha256(join(outDir, name))] as const),
  );
  if (checksums.size > 0) {
    const { text, unfilled } = fillKrewManifest(root, { version, owner: values.owner, checksums });
    writeFileSync(join(outDir, 'simlock.yaml'), text);
    if (unfilled.length > 0 && values.complete) {
      throw new Error(`--complete: no archive for ${unfilled.join(', ')} in ${outDir}`);
    }
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
