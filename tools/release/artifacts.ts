// The release's other files: the CRDs as one file, the chart packaged with its image tag pinned,
// the typed client's npm package, and the image saved as an archive.
import { execFileSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { chmodSync, cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';

/** crds/*.yaml in one file (`kubectl apply -f simlock-crds.yaml`). */
export function writeCrds(root: string, outDir: string, version: string): string {
  const folder = join(root, 'crds');
  const documents = readdirSync(folder)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => readFileSync(join(folder, name), 'utf8').trim());
  const file = join(outDir, `simlock-crds-${version}.yaml`);
  writeFileSync(file, `${documents.map((text) => `---\n${text}\n`).join('')}`);
  return file;
}

/**
 * `helm package` of charts/simlock with version and appVersion from package.json and values'
 * image.tag set to the same version, so the chart runs the image of its own release even where
 * someone's values leave the tag out. `helm` is the pinned one (tools/controlplane/build.sh).
 */
export function packageChart(
  root: string,
  helm: string,
  outDir: string,
  version: string,
  work: string,
): string {
  const chart = join(work, 'chart', 'simlock');
  cpSync(join(root, 'charts', 'simlock'), chart, { recursive: true });
  const valuesFile = join(chart, 'values.yaml');
  const values = parseDocument(readFileSync(valuesFile, 'utf8'));
  values.setIn(['image', 'tag'], version);
  writeFileSync(valuesFile, values.toString({ lineWidth: 0 }));
  execFileSync(
    helm,
    ['package', chart, '--version', version, '--app-version', version, '--destination', outDir],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return join(outDir, `simlock-${version}.tgz`);
}

/** `npm pack`: the tarball behind `import … from 'simlock/client'` (its prepack builds dist/). */
export function packClient(root: string, outDir: string): string {
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .at(-1);
  if (!name) throw new Error('npm pack named no tarball');
  return join(outDir, name);
}

/**
 * The image as the kind tier builds it (`docker build`, with NODE_IMAGE when the registry's
 * node:24-slim cannot be pulled: tools/kind/build.sh makes one, and with `hostNetwork` the flags
 * e2e/kind/kind.ts gives a dockerd whose containers resolve no outside name: the host's network
 * and npm registry's address), saved with `docker save` under `tag`.
 */
export async function saveImage(
  root: string,
  outDir: string,
  options: { tag: string; nodeImage?: string; hostNetwork?: boolean },
): Promise<string> {
  const args = ['build', '-t', options.tag];
  if (options.nodeImage) args.push('--build-arg', `NODE_IMAGE=${options.nodeImage}`);
  if (options.hostNetwork) {
    const registry = new URL(
      execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim(),
    ).hostname;
    const { address } = await lookup(registry, { family: 4 });
    args.push('--network', 'host', '--add-host', `${registry}:${address}`);
  }
  execFileSync('docker', [...args, '.'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const file = join(outDir, `simlock-image-${options.tag.split(':').at(-1) ?? 'latest'}.tar`);
  execFileSync('docker', ['save', '-o', file, options.tag], { stdio: 'inherit' });
  chmodSync(file, 0o644); // docker save writes it for its owner alone
  return file;
}
