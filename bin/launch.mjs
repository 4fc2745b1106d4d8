// @ts-check
// node bin/launch.mjs COMPONENT [args]: runs kubectl-simlock, controller, agent, proxy or console
// from its bundle (bin/bundle.mjs). In a clone the bundles live under
// node_modules/.cache/simlock/bundle/<stamp>/, <stamp> a key of the sources: the first start after
// a change builds them (a few seconds, said on stderr), later starts reuse them, so what runs is
// always the code on disk. Processes that start together build once: a build goes to a folder of
// its own and is renamed into place; a process that loses the race uses the winner's.
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildBundles, ENTRY_POINTS, sourceStamp } from './bundle.mjs';

// package.json's engines: the Kubernetes client simlock is built on needs Node 22.19 or later, and
// on an older Node fails deep inside its HTTP stack. Say so plainly instead.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(
    `simlock needs Node.js 22.19 or later (24 is what it is tested on); this is ${process.version} (${process.execPath})`,
  );
  process.exit(1);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const [component, ...args] = process.argv.slice(2);
if (component === undefined || !Object.hasOwn(ENTRY_POINTS, component)) {
  console.error(`usage: node bin/launch.mjs ${Object.keys(ENTRY_POINTS).join('|')} [args]`);
  process.exit(64);
}

const cache = join(root, 'node_modules', '.cache', 'simlock', 'bundle');
const folder = join(cache, sourceStamp(root));
const bundle = join(folder, `${component}.mjs`);
if (existsSync(bundle)) markUsed();
else await build();

// The component reads its flags from process.argv, as if started as `node <bundle> args`.
process.argv = [process.argv[0] ?? 'node', bundle, ...args];
await import(pathToFileURL(bundle).href);

async function build() {
  const started = Date.now();
  const building = `${folder}.building-${process.pid}`;
  await buildBundles(root, building);
  try {
    renameSync(building, folder);
    console.error(`simlock: built the bundles for these sources in ${Date.now() - started} ms`);
  } catch {
    // Another process built the same sources first: use its bundles.
    rmSync(building, { recursive: true, force: true });
  }
  pruneOld();
}

// A folder's time is when it was last started from, so pruning spares the ones in use.
function markUsed() {
  try {
    const now = new Date();
    utimesSync(folder, now, now);
  } catch {
    // a read-only checkout: nothing is pruned there either
  }
}

// Bundles not started from for an hour go; a process started from one loads its chunks lazily.
function pruneOld() {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === folder) continue;
    try {
      if (statSync(path).mtimeMs < hourAgo) rmSync(path, { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
}
