// One platform's archive for krew: the single binary and the license of the Node.js inside it,
// at the archive's top level, and its SHA-256 (what the krew manifest pins).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { archiveName, type Platform } from './platforms.js';

/** The files of every archive, as krew/simlock.yaml's `files` name them. */
export const ARCHIVE_FILES = ['kubectl-simlock', 'NODE-LICENSE'] as const;

export function sha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/**
 * Writes `<outDir>/kubectl-simlock-<os>-<arch>.tar.gz` and returns its path. With GNU tar the
 * archive is the same bytes for the same binary (sorted, owner 0, a fixed time, gzip without a
 * name or time); bsdtar on a Mac makes an equivalent one.
 */
export function writeArchive(
  binary: string,
  nodeLicense: string,
  platform: Platform,
  outDir: string,
  work: string,
): string {
  const staging = join(work, `archive-${platform.node}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  copyFileSync(binary, join(staging, 'kubectl-simlock'));
  copyFileSync(nodeLicense, join(staging, 'NODE-LICENSE'));
  const tarball = join(work, `${platform.node}.tar`);
  const gnu = execFileSync('tar', ['--version'], { encoding: 'utf8' }).includes('GNU tar');
  const reproducible = gnu
    ? ['--sort=name', '--owner=0', '--group=0', '--numeric-owner', '--mtime=@0']
    : [];
  // COPYFILE_DISABLE: macOS's tar would add an AppleDouble ._ file for each file's extended
  // attributes; an archive holds the two files alone (darwin-archives.ts refuses any other).
  execFileSync('tar', [...reproducible, '-cf', tarball, '-C', staging, ...ARCHIVE_FILES], {
    env: { ...process.env, COPYFILE_DISABLE: '1' },
  });
  // gzip's default level: -9 takes four times the CPU for 0.6 % less.
  execFileSync('gzip', ['-n', '-f', tarball]);
  const archive = join(outDir, archiveName(platform));
  mkdirSync(outDir, { recursive: true });
  copyFileSync(`${tarball}.gz`, archive);
  return archive;
}
