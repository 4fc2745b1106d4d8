// The platforms the plugin's single binary is released for: the name of the npm package that
// holds each one's official Node.js build (node-<name>, tools/ensure-node.sh) and the os/arch
// pair krew selects it by (krew uses Go's names: amd64, not x64).
export interface Platform {
  /** Node's name, as in the npm package node-<node>. */
  readonly node: 'linux-x64' | 'linux-arm64' | 'darwin-x64' | 'darwin-arm64';
  readonly os: 'linux' | 'darwin';
  readonly arch: 'amd64' | 'arm64';
}

export const PLATFORMS: readonly Platform[] = [
  { node: 'linux-x64', os: 'linux', arch: 'amd64' },
  { node: 'linux-arm64', os: 'linux', arch: 'arm64' },
  { node: 'darwin-x64', os: 'darwin', arch: 'amd64' },
  { node: 'darwin-arm64', os: 'darwin', arch: 'arm64' },
];

/** The archive krew downloads for a platform. */
export function archiveName(platform: Platform): string {
  return `kubectl-simlock-${platform.os}-${platform.arch}.tar.gz`;
}

/** The platforms named on the command line (Node's or krew's names), all when none are. */
export function choosePlatforms(names: readonly string[]): Platform[] {
  if (names.length === 0) return [...PLATFORMS];
  return names.map((name) => {
    const found = PLATFORMS.find(
      (platform) => platform.node === name || `${platform.os}-${platform.arch}` === name,
    );
    if (!found) {
      throw new Error(
        `no release platform ${name}: ${PLATFORMS.map((platform) => platform.node).join(', ')}`,
      );
    }
    return found;
  });
}

/** The platform of the machine this runs on, if it is one of the release's. */
export function hostPlatform(): Platform | undefined {
  return PLATFORMS.find((platform) => platform.node === `${process.platform}-${process.arch}`);
}
