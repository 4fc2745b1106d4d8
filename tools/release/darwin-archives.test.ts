// The darwin archives a real release takes from its macOS jobs (--darwin-archives): a signed
// single executable of its archive's CPU is copied into the release; anything else is refused,
// saying why, before the release is made.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { takeDarwinArchives } from './darwin-archives.js';
import { platformNamed } from './platforms.js';
import {
  darwinArchive,
  nodeArm64,
  signedPluginArm64,
  signedPluginX64,
  unsignedPluginX64,
} from './testing/darwin-samples.js';

const root = mkdtempSync(join(tmpdir(), 'simlock-darwin-archives-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
/** A fresh folder of archives from the macOS jobs, the release folder, and scratch space. */
function folders() {
  const base = join(root, String(count++));
  const dirs = { jobs: join(base, 'jobs'), release: join(base, 'release'), work: join(base, 'w') };
  mkdirSync(dirs.jobs, { recursive: true });
  return dirs;
}
const intel = platformNamed('darwin-x64');
const appleSilicon = platformNamed('darwin-arm64');

describe('takeDarwinArchives', () => {
  it('takes both signed darwin archives into the release, byte for byte', () => {
    const { jobs, release, work } = folders();
    const x64 = darwinArchive(signedPluginX64(), intel, jobs, work);
    const arm64 = darwinArchive(signedPluginArm64(), appleSilicon, jobs, work);
    const taken = takeDarwinArchives(jobs, release, work);
    expect(taken.map(({ node }) => node)).toEqual(['darwin-x64', 'darwin-arm64']);
    expect(readFileSync(join(release, 'kubectl-simlock-darwin-amd64.tar.gz'))).toEqual(
      readFileSync(x64),
    );
    expect(readFileSync(join(release, 'kubectl-simlock-darwin-arm64.tar.gz'))).toEqual(
      readFileSync(arm64),
    );
  });

  it('refuses an unsigned binary (as one built on Linux is)', () => {
    const { jobs, release, work } = folders();
    darwinArchive(unsignedPluginX64(), intel, jobs, work);
    expect(() => takeDarwinArchives(jobs, release, work)).toThrow(
      'kubectl-simlock-darwin-amd64.tar.gz: its kubectl-simlock is NOT SIGNED (no LC_CODE_SIGNATURE)',
    );
    expect(existsSync(join(release, 'kubectl-simlock-darwin-amd64.tar.gz'))).toBe(false);
  });

  it("refuses a binary of the other CPU under an archive's name (a runner label's mix-up)", () => {
    const { jobs, release, work } = folders();
    darwinArchive(signedPluginX64(), appleSilicon, jobs, work);
    expect(() => takeDarwinArchives(jobs, release, work)).toThrow(
      'kubectl-simlock-darwin-arm64.tar.gz: its kubectl-simlock is a darwin amd64 binary, not arm64',
    );
  });

  it("refuses Node's binary without the blob: not a single executable", () => {
    const { jobs, release, work } = folders();
    darwinArchive(nodeArm64(), appleSilicon, jobs, work);
    expect(() => takeDarwinArchives(jobs, release, work)).toThrow('has no NODE_SEA segment');
  });

  it('refuses other files, and a folder with no archive', () => {
    const { jobs, release, work } = folders();
    expect(() => takeDarwinArchives(jobs, release, work)).toThrow('holds no archive');
    writeFileSync(join(jobs, 'kubectl-simlock-linux-amd64.tar.gz'), '');
    expect(() => takeDarwinArchives(jobs, release, work)).toThrow(
      'kubectl-simlock-linux-amd64.tar.gz in',
    );
  });
});
