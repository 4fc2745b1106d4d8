// kubectl-simlock as one executable: the plugin's bundle inside a Node.js single executable
// application (SEA). Node 24's SEA runs one CommonJS script whose require() reaches only Node's
// own modules, so the bundle here is one CommonJS file with every dependency and every command
// in it (bin/bundle.mjs makes ES modules in chunks for the clone and the image instead). The
// preparation blob holds that script, and for the platform it is made on, V8's code cache of it:
// that start skips compiling the 5.7 MB script (bench/plugin-start.ts: about a third of the
// CPU of `--help`). A code cache belongs to the V8 and the machine that made it, so a binary for
// another platform gets a blob without one (it compiles at each start, as the clone's plugin
// does); .github/workflows/release.yml builds each platform on its own runner, with its cache.
// The blob is made by the build machine's Node of the binary's version (Node's rule: the same
// version makes and runs a blob) and injected with postject, which writes ELF and Mach-O alike,
// into a copy of each platform's pinned Node binary (platforms.ts).
import { execFileSync } from 'node:child_process';
import { copyFileSync, chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build } from 'esbuild';
import type { Platform } from './platforms.js';

/** The fuse Node looks for to know a blob was injected (Node's docs on single executables). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** Writes the plugin as one CommonJS file: cli/main.ts and all it imports. */
export async function buildPluginScript(root: string, outFile: string): Promise<void> {
  await build({
    absWorkingDir: root,
    entryPoints: [join(root, 'cli', 'main.ts')],
    outfile: outFile,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node24',
    // Dependencies written as ES modules take their own location from import.meta.url, which a
    // CommonJS file lacks: the executable's path stands in for it (nothing is read beside it).
    define: { 'import.meta.url': '__simlockModuleUrl' },
    banner: {
      js: "const __simlockModuleUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    legalComments: 'none',
    logLevel: 'warning',
  });
}

/**
 * `node --experimental-sea-config`: the preparation blob of `script`, made by `hostNode`, with
 * the code cache for `hostNode`'s platform when `codeCache` (only for a binary of that platform).
 */
export function buildSeaBlob(
  hostNode: string,
  script: string,
  work: string,
  codeCache: boolean,
): string {
  // Paths relative to `work`: the blob records the script's name, and a temporary folder's name
  // would make every build's bytes differ.
  const kind = codeCache ? 'host' : 'portable';
  const blob = join(work, `kubectl-simlock.${kind}.blob`);
  const config = join(work, `sea-config.${kind}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      main: relative(work, script),
      output: relative(work, blob),
      disableExperimentalSEAWarning: true,
      useCodeCache: codeCache,
      // A startup snapshot would need the plugin written for it (no top-level I/O); the code
      // cache gives most of what it would.
      useSnapshot: false,
    }),
  );
  execFileSync(hostNode, ['--experimental-sea-config', config], { cwd: work, stdio: 'ignore' });
  return blob;
}

/**
 * A copy of `node` (that platform's pinned binary) with the blob injected, at `outFile`. Node's
 * macOS binary is signed; postject drops that signature (its LC_CODE_SIGNATURE) as it adds the
 * blob's segment, where codesign exists its signature is removed first, and `signForMac` signs the
 * result ad hoc (macOS on arm64 runs no unsigned binary).
 */
export async function injectBlob(
  node: string,
  blob: string,
  platform: Platform,
  outFile: string,
): Promise<void> {
  const { inject } = await import('postject');
  mkdirSync(join(outFile, '..'), { recursive: true });
  copyFileSync(node, outFile);
  chmodSync(outFile, 0o755);
  if (platform.os === 'darwin' && hasCodesign()) {
    execFileSync('codesign', ['--remove-signature', outFile], { stdio: 'inherit' });
  }
  // postject's LIEF warns on stderr, once per note section of Node's ELF, that it cannot name it;
  // the injection is whole all the same (the binary runs): those lines alone are dropped.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes("Can't find string offset for section name")) warn(...args);
  };
  try {
    await inject(outFile, 'NODE_SEA_BLOB', readFileSync(blob), {
      sentinelFuse: SEA_FUSE,
      ...(platform.os === 'darwin' ? { machoSegmentName: 'NODE_SEA' } : {}),
      overwrite: true,
    });
  } finally {
    console.warn = warn;
  }
}

/** Whether Apple's codesign is on PATH: on a Mac, never on Linux. */
export function hasCodesign(): boolean {
  try {
    execFileSync('codesign', ['--help'], { stdio: 'ignore' });
    return true;
  } catch (error) {
    // codesign --help exits non-zero but exists; ENOENT means it is not there.
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}

/** The ad-hoc signature macOS needs on an arm64 binary (and Gatekeeper checks on both). */
export function signForMac(file: string): void {
  execFileSync('codesign', ['--sign', '-', '--force', file], { stdio: 'inherit' });
}
