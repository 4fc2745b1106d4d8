// The darwin archives of a real release are not built by the release build on Linux: the release
// workflow's macOS jobs build each on a runner of its own CPU, from nodejs.org's Node of the pinned
// version, and sign it ad hoc (.github/workflows/release.yml). `--darwin-archives DIR` hands them
// to the build: each is checked (the two files krew installs; a Mach-O binary of its archive's CPU
// with the single executable's NODE_SEA segment and a code signature) and copied into the release
// folder, where the krew manifest and SHA256SUMS take it like any archive built there. The check
// catches a job whose runner label named the other CPU, or a binary that missed its signing step;
// the signature's validity is checked by `codesign --verify` on the runner that made it.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARCHIVE_FILES } from './archive.js';
import { readMachO } from './macho.js';
import { archiveName, PLATFORMS, type Platform } from './platforms.js';

const DARWIN = PLATFORMS.filter(({ os }) => os === 'darwin');

/**
 * Checks every archive in `dir` and copies it into `outDir`; returns their platforms. Anything in
 * `dir` but kubectl-simlock-darwin-<arch>.tar.gz is refused, and so is an empty `dir`.
 */
export function takeDarwinArchives(dir: string, outDir: string, work: string): Platform[] {
  const names = readdirSync(dir).sort();
  if (names.length === 0) throw new Error(`--darwin-archives: ${dir} holds no archive`);
  mkdirSync(outDir, { recursive: true });
  return names.map((name) => {
    const platform = DARWIN.find((candidate) => archiveName(candidate) === name);
    if (!platform) {
      throw new Error(
        `--darwin-archives: ${name} in ${dir} is not ${DARWIN.map(archiveName).join(' or ')}`,
      );
    }
    checkDarwinArchive(join(dir, name), platform, work);
    copyFileSync(join(dir, name), join(outDir, name));
    return platform;
  });
}

/** Throws, saying why, unless `archive` holds what a release ships for the darwin `platform`. */
export function checkDarwinArchive(archive: string, platform: Platform, work: string): void {
  const name = archiveName(platform);
  const listed = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((entry) => entry.replace(/^\.\//, ''))
    .sort();
  const expected = [...ARCHIVE_FILES].sort();
  if (listed.join() !== expected.join()) {
    throw new Error(`${name} holds ${listed.join(', ')}; an archive holds ${expected.join(', ')}`);
  }
  const folder = join(work, `check-${platform.node}`);
  mkdirSync(folder, { recursive: true });
  execFileSync('tar', ['-xzf', archive, '-C', folder, 'kubectl-simlock']);
  const binary = readMachO(join(folder, 'kubectl-simlock'));
  if (binary.arch !== platform.arch) {
    throw new Error(
      `${name}: its kubectl-simlock is a darwin ${binary.arch} binary, not ${platform.arch} (the job's runner has the other CPU?)`,
    );
  }
  if (!binary.segments.includes('NODE_SEA')) {
    throw new Error(
      `${name}: its kubectl-simlock has no NODE_SEA segment: not a single executable application (postject adds it with the blob)`,
    );
  }
  if (!binary.signed) {
    throw new Error(
      `${name}: its kubectl-simlock is NOT SIGNED (no LC_CODE_SIGNATURE): a release's darwin binaries are signed ad hoc on their macOS runner (codesign --sign -)`,
    );
  }
}
