// The krew manifest a release publishes: krew/simlock.yaml with the tag, the owner and each
// archive's checksum filled in, any platform without an archive left uninstallable, and
// darwin/arm64 (which only a Mac builds) listed only when its archive came from one.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { fillKrewManifest, UNFILLED_SHA256 } from './krew-manifest.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Filled {
  spec: {
    version: string;
    homepage: string;
    platforms: {
      selector: { matchLabels: { os: string; arch: string } };
      uri: string;
      sha256: string;
    }[];
  };
}

describe('fillKrewManifest', () => {
  const linux = 'e1'.repeat(32);
  const { text, unfilled, omitted } = fillKrewManifest(root, {
    version: '1.2.3',
    owner: 'example-org',
    checksums: new Map([['kubectl-simlock-linux-amd64.tar.gz', linux]]),
  });
  const manifest = parse(text) as Filled;
  const platform = (os: string, arch: string) =>
    manifest.spec.platforms.find(
      ({ selector }) => selector.matchLabels.os === os && selector.matchLabels.arch === arch,
    );

  it("points every platform at the release's download of its archive", () => {
    expect(manifest.spec.version).toBe('v1.2.3');
    expect(manifest.spec.homepage).toBe('https://github.com/example-org/simlock');
    expect(platform('darwin', 'amd64')?.uri).toBe(
      'https://github.com/example-org/simlock/releases/download/v1.2.3/kubectl-simlock-darwin-amd64.tar.gz',
    );
  });

  it('pins the checksum of each archive built, as a string', () => {
    expect(platform('linux', 'amd64')?.sha256).toBe(linux);
    // A checksum that YAML could read as a number stays quoted.
    expect(text).toContain(`sha256: '${linux}'`);
  });

  it('leaves the all-zero checksum where no archive was built, and names those', () => {
    expect(platform('linux', 'arm64')?.sha256).toBe(UNFILLED_SHA256);
    expect(unfilled.sort()).toEqual([
      'kubectl-simlock-darwin-amd64.tar.gz',
      'kubectl-simlock-linux-arm64.tar.gz',
    ]);
  });

  it('leaves darwin/arm64 out without its archive (none is built off a Mac), and says so', () => {
    expect(platform('darwin', 'arm64')).toBeUndefined();
    expect(manifest.spec.platforms).toHaveLength(3);
    expect(omitted.map(({ node }) => node)).toEqual(['darwin-arm64']);
  });

  it("lists darwin/arm64 with its checksum when a Mac's archive is there", () => {
    const signed = 'a4'.repeat(32);
    const filled = fillKrewManifest(root, {
      version: '1.2.3',
      owner: 'example-org',
      checksums: new Map([['kubectl-simlock-darwin-arm64.tar.gz', signed]]),
    });
    const appleSilicon = (parse(filled.text) as Filled).spec.platforms.find(
      ({ selector }) =>
        selector.matchLabels.os === 'darwin' && selector.matchLabels.arch === 'arm64',
    );
    expect(appleSilicon).toMatchObject({
      uri: 'https://github.com/example-org/simlock/releases/download/v1.2.3/kubectl-simlock-darwin-arm64.tar.gz',
      sha256: signed,
    });
    expect(filled.omitted).toEqual([]);
  });

  it('keeps the comments that say what each field is', () => {
    expect(text).toContain('# The krew manifest of the kubectl plugin');
  });
});
