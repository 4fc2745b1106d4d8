// The krew manifest of the kubectl plugin: the shape krew requires, one archive per platform, and
// the version of package.json (the release job fills in the owner and the checksums).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

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

  it('has an archive for Linux on both architectures and Intel macOS, each with a checksum', () => {
    // No darwin/arm64: the npm registry has no Node for it that the release could build from
    // (tools/release/platforms.ts).
    expect(
      manifest.spec.platforms
        .map(({ selector }) => `${selector.matchLabels.os}/${selector.matchLabels.arch}`)
        .sort(),
    ).toEqual(['darwin/amd64', 'linux/amd64', 'linux/arm64']);
    for (const platform of manifest.spec.platforms) {
      const { os, arch } = platform.selector.matchLabels;
      expect(platform.uri).toMatch(/^https:\/\//);
      expect(platform.uri).toContain(`/v${version}/kubectl-simlock-${os}-${arch}.tar.gz`);
      expect(platform.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(platform.bin).toBe('kubectl-simlock');
    }
  });
});
