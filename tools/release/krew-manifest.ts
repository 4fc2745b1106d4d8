// krew/simlock.yaml filled in for one release: the tag, the owner in the download addresses, and
// each platform's archive checksum. The comments of the file in the repository stay, so the
// filled manifest still says what each field is. A platform that this machine cannot build
// (darwin-arm64: no Node for it on the npm registry) and whose archive did not come from elsewhere
// (a real release's macOS job) is left out, so that krew says the plugin has no build for it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument, isMap, isSeq, Scalar } from 'yaml';
import { archiveName, PLATFORMS, type Platform } from './platforms.js';

export interface ManifestInput {
  /** package.json's version, without the v. */
  version: string;
  /** The GitHub owner the release is published under. */
  owner: string;
  /** SHA-256 by archive file name (kubectl-simlock-<os>-<arch>.tar.gz). */
  checksums: ReadonlyMap<string, string>;
}

export const UNFILLED_SHA256 = '0'.repeat(64);

export interface FilledManifest {
  text: string;
  /** Archives it lacks a checksum for: their all-zero placeholder stays, so krew refuses them. */
  unfilled: string[];
  /** Platforms left out of it: no archive, and none can be built without a Mac (platforms.ts). */
  omitted: Platform[];
}

/** krew/simlock.yaml filled in from `input`. */
export function fillKrewManifest(root: string, input: ManifestInput): FilledManifest {
  const template = readFileSync(join(root, 'krew', 'simlock.yaml'), 'utf8');
  const document = parseDocument(template);
  const tag = `v${input.version}`;
  document.setIn(['spec', 'version'], tag);
  const homepage = String(document.getIn(['spec', 'homepage']));
  document.setIn(['spec', 'homepage'], homepage.replace('OWNER', input.owner));
  const platforms = document.getIn(['spec', 'platforms']);
  if (!isSeq(platforms)) throw new Error('krew/simlock.yaml: spec.platforms is not a list');
  const unfilled: string[] = [];
  const omitted: Platform[] = [];
  const listed: Platform[] = [];
  for (const item of [...platforms.items]) {
    if (!isMap(item)) throw new Error('krew/simlock.yaml: a platform is not a map');
    const entry = item;
    const os = String(entry.getIn(['selector', 'matchLabels', 'os']));
    const arch = String(entry.getIn(['selector', 'matchLabels', 'arch']));
    const platform = PLATFORMS.find((known) => known.os === os && known.arch === arch);
    if (!platform) throw new Error(`krew/simlock.yaml: no release platform ${os}/${arch}`);
    listed.push(platform);
    const name = archiveName(platform);
    const checksum = input.checksums.get(name);
    if (!checksum && platform.nodeVersion === null) {
      platforms.items.splice(platforms.items.indexOf(item), 1);
      omitted.push(platform);
      continue;
    }
    entry.set('uri', `https://github.com/${input.owner}/simlock/releases/download/${tag}/${name}`);
    if (checksum) {
      // Quoted, as in the template: a checksum of digits and one e would otherwise read as a number.
      const quoted = new Scalar(checksum);
      quoted.type = Scalar.QUOTE_SINGLE;
      entry.set('sha256', quoted);
    } else unfilled.push(name);
  }
  const unlisted = PLATFORMS.filter((platform) => !listed.includes(platform));
  if (unlisted.length > 0) {
    throw new Error(
      `krew/simlock.yaml lacks ${unlisted.map(({ os, arch }) => `${os}/${arch}`).join(', ')}, which a release ships`,
    );
  }
  return { text: document.toString({ lineWidth: 0 }), unfilled, omitted };
}
