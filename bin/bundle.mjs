// @ts-check
// The bundles simlock runs from: each component's main.ts and everything it imports (our code and
// its npm dependencies) in a few ES modules made by esbuild. A process started from a bundle
// loads one file instead of some 1,500 modules compiled one by one by tsx: the plugin and each
// server start in a fraction of the CPU time (docs/adr/0009-bundled-entry-points.md).
//
//   node bin/bundle.mjs --out DIR [--only a,b]   builds the bundles into DIR (the image does this)
//
// bin/launch.mjs builds them on demand in a clone, keyed by the state of the sources.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bundles, by the name a process is started with, and the source each one starts from. */
export const ENTRY_POINTS = {
  'kubectl-simlock': 'cli/main.ts',
  controller: 'controller/main.ts',
  agent: 'agent/main.ts',
  proxy: 'proxy/main.ts',
  console: 'console/main.ts',
};

// Folders whose TypeScript goes into a bundle. Tests, benchmarks and the console's web page
// (built by Vite, served as files) are not part of any.
const SOURCE_FOLDERS = [
  'api',
  'runtime',
  'cli',
  'controller',
  'agent',
  'proxy',
  'console',
  'client',
];
const SKIPPED = new Set(['node_modules', 'web', 'testdata']);

/** Every source file a bundle can contain, with its size and modification time. */
function sourceFiles(root) {
  /** @type {string[]} */
  const found = [];
  const walk = (/** @type {string} */ folder) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return; // a folder this checkout does not have
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) walk(path);
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        found.push(path);
      }
    }
  };
  for (const folder of SOURCE_FOLDERS) walk(join(root, folder));
  found.push(join(root, 'package-lock.json'), fileURLToPath(import.meta.url));
  return found.sort();
}

/**
 * A key that changes whenever a file that goes into a bundle changes (path, size or modification
 * time), or the dependencies or this build do. Reading it stats a few hundred files: milliseconds.
 */
export function sourceStamp(root) {
  const hash = createHash('sha256');
  for (const file of sourceFiles(root)) {
    let stat;
    try {
      stat = statSync(file);
    } catch {
      continue;
    }
    hash.update(`${relative(root, file)}\0${stat.size}\0${stat.mtimeMs}\n`);
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * How every bundle is made (bench/driver-libraries builds the driver libraries' bundles alike, to
 * weigh them as simlock would run them).
 * @satisfies {import('esbuild').BuildOptions}
 */
export const BUNDLE_OPTIONS = /** @type {const} */ ({
  bundle: true,
  // Shared code in chunks, and each plugin command still loaded only when it runs.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  outExtension: { '.js': '.mjs' },
  sourcemap: 'linked',
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __simlockCreateRequire } from 'node:module'; const require = __simlockCreateRequire(import.meta.url);",
  },
});

/** Builds the bundles (all, or the ones named) into `outDir` (created; files in it overwritten). */
export async function buildBundles(root, outDir, only = Object.keys(ENTRY_POINTS)) {
  const esbuild = await import('esbuild');
  const { outputFiles } = await esbuild.build({
    ...BUNDLE_OPTIONS,
    absWorkingDir: root,
    entryPoints: Object.fromEntries(
      Object.entries(ENTRY_POINTS).filter(([name]) => only.includes(name)),
    ),
    outdir: outDir,
    logLevel: 'warning',
    write: false,
  });
  for (const file of outputFiles) {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, file.path.endsWith('.mjs') ? asciiOnly(file.text) : file.contents);
  }
}

/**
 * The text with every character outside ASCII written as its `\uXXXX` escape. esbuild escapes
 * them in code but not in the comments it keeps, and one such character (a ’ in a dependency's
 * comment) makes V8 hold the whole source of a bundle at two bytes a character: about 4 MiB more
 * memory in every process (outside V8's heap: bench/bundle-memory.ts). An escape means the same character in a string, a template, a regular
 * expression or an identifier, and in a comment it is only text. (A source map's columns after
 * such a comment on the same line move; esbuild keeps comments on lines of their own.)
 * @param {string} text
 */
export function asciiOnly(text) {
  return text.replace(
    /[\u0080-\uffff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flag = (/** @type {string} */ name) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const out = flag('--out');
  const only = (flag('--only') ?? Object.keys(ENTRY_POINTS).join(',')).split(',');
  const unknown = only.filter((name) => !Object.hasOwn(ENTRY_POINTS, name));
  if (!out || unknown.length > 0) {
    console.error(
      `usage: node bin/bundle.mjs --out DIR [--only ${Object.keys(ENTRY_POINTS).join(',')}]`,
    );
    if (unknown.length > 0) console.error(`--only: no bundle named ${unknown.join(', ')}`);
    process.exit(64);
  }
  const root = fileURLToPath(new URL('..', import.meta.url));
  await buildBundles(root, out, only);
  console.error(`bundles: ${only.join(', ')} in ${out}`);
}
