// The three device-tool libraries ADR 0020 weighs, as installed outside the repository (they are
// not its dependencies): one npm project per library under the folder given with --libs, and what
// each one's installed tree weighs on disk.
import { lstat, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

export interface Library {
  /** Its folder under --libs, and its name in the figures. */
  key: 'node-simctl' | 'appium-adb' | 'adbkit';
  package: string;
  /** What a bundle entry or a start imports: the library's main class, as a driver would. */
  importLine: string;
  imported: string;
  /**
   * Packages esbuild cannot bundle with the repository's settings, marked external on a second
   * try. `sharp` is @appium/support's optional image dependency: native code, loaded lazily.
   */
  externalIfNeeded: string[];
}

export const LIBRARIES: readonly Library[] = [
  {
    key: 'node-simctl',
    package: 'node-simctl',
    importLine: "import { Simctl } from 'node-simctl';",
    imported: 'Simctl',
    externalIfNeeded: [],
  },
  {
    key: 'appium-adb',
    package: 'appium-adb',
    importLine: "import { ADB } from 'appium-adb';",
    imported: 'ADB',
    externalIfNeeded: ['sharp'],
  },
  {
    key: 'adbkit',
    package: '@devicefarmer/adbkit',
    importLine: "import Adb from '@devicefarmer/adbkit';",
    imported: 'Adb',
    externalIfNeeded: [],
  },
];

export function projectDir(libs: string, library: Library): string {
  return join(libs, library.key);
}

export function packageDir(libs: string, library: Library): string {
  return join(libs, library.key, 'node_modules', library.package);
}

/** The commands that install the libraries that are not under `libs` yet (none: all there). */
export async function missingLibraries(libs: string): Promise<string[]> {
  const missing: string[] = [];
  for (const library of LIBRARIES) {
    const there = await lstat(join(packageDir(libs, library), 'package.json')).catch(() => null);
    if (there === null) {
      missing.push(`npm install --prefix ${projectDir(libs, library)} ${library.package}`);
    }
  }
  return missing;
}

const PackageJson = z.object({
  name: z.string(),
  version: z.string(),
  license: z.string().optional(),
  main: z.string().optional(),
  engines: z.record(z.string(), z.string()).optional(),
  dependencies: z.record(z.string(), z.string()).optional(),
  exports: z.unknown().optional(),
});
type PackageJson = z.infer<typeof PackageJson>;

async function readPackageJson(dir: string): Promise<PackageJson> {
  return PackageJson.parse(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')));
}

/** The library's module, loaded from its install (its `exports` import entry, else `main`). */
export async function importLibrary(libs: string, library: Library): Promise<unknown> {
  const dir = packageDir(libs, library);
  const json = await readPackageJson(dir);
  const exportsEntry = z.object({ '.': z.object({ import: z.string() }) }).safeParse(json.exports);
  const entry = exportsEntry.success ? exportsEntry.data['.'].import : (json.main ?? 'index.js');
  return (await import(pathToFileURL(join(dir, entry)).href)) as unknown;
}

export interface InstallFigures {
  version: string;
  license: string;
  nodeEngines: string;
  dependencies: number;
  /** Packages in the installed tree, the library included. */
  packages: number;
  /** Blocks on disk, as `du` counts them, and the files' own sizes. */
  diskBytes: number;
  apparentBytes: number;
  /** The three heaviest packages of the tree (disk bytes, without the packages nested in them). */
  largest: { name: string; diskBytes: number }[];
}

interface Walk {
  diskBytes: number;
  apparentBytes: number;
}

async function walk(path: string, totals: Walk, skipNested = false): Promise<void> {
  const stat = await lstat(path);
  totals.diskBytes += stat.blocks * 512;
  totals.apparentBytes += stat.size;
  if (!stat.isDirectory()) return;
  for (const name of await readdir(path)) {
    if (skipNested && name === 'node_modules') continue;
    await walk(join(path, name), totals, skipNested);
  }
}

/** Every package folder under a node_modules folder, nested ones included. */
async function packageFolders(nodeModules: string): Promise<{ name: string; dir: string }[]> {
  const found: { name: string; dir: string }[] = [];
  const names = await readdir(nodeModules).catch(() => [] as string[]);
  for (const name of names) {
    if (name.startsWith('.')) continue;
    const scoped = name.startsWith('@')
      ? (await readdir(join(nodeModules, name))).map((inner) => `${name}/${inner}`)
      : [name];
    for (const full of scoped) {
      const dir = join(nodeModules, full);
      if ((await lstat(join(dir, 'package.json')).catch(() => null)) === null) continue;
      found.push({ name: full, dir }, ...(await packageFolders(join(dir, 'node_modules'))));
    }
  }
  return found;
}

export async function installFigures(libs: string, library: Library): Promise<InstallFigures> {
  const json = await readPackageJson(packageDir(libs, library));
  const nodeModules = join(projectDir(libs, library), 'node_modules');
  const totals: Walk = { diskBytes: 0, apparentBytes: 0 };
  await walk(nodeModules, totals);
  const folders = await packageFolders(nodeModules);
  const sizes = new Map<string, number>();
  for (const folder of folders) {
    // A package's own files: the packages nested in it count under their own names.
    const own: Walk = { diskBytes: 0, apparentBytes: 0 };
    await walk(folder.dir, own, true);
    sizes.set(folder.name, (sizes.get(folder.name) ?? 0) + own.diskBytes);
  }
  return {
    version: json.version,
    license: json.license ?? 'none stated',
    nodeEngines: json.engines?.node ?? 'none stated',
    dependencies: Object.keys(json.dependencies ?? {}).length,
    packages: folders.length,
    diskBytes: totals.diskBytes,
    apparentBytes: totals.apparentBytes,
    largest: [...sizes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([name, diskBytes]) => ({ name, diskBytes })),
  };
}

/**
 * Quiets appium's logger. appium-adb and node-simctl log through @appium/logger's process-wide
 * npmlog, on stderr, at "verbose" once appium-adb loaded it first (every adb command it runs).
 */
export function quietAppiumLog(): void {
  const log = (globalThis as { _global_npmlog?: { level: string } })._global_npmlog;
  if (log) log.level = 'silent';
}
