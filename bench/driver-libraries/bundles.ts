// What each library would add to the agent's bundle, and the small programs the start times run.
// Every entry is built with the settings of bin/bundle.mjs (ES module, code splitting, Node 22
// target, the `require` banner, linked source maps, no minification, ASCII-only text), so a
// size here is a size in the image. An entry imports a library's main class and keeps it, as a
// driver would; the libraries are classes whose methods are fields, so nothing of them is shaken
// out whatever is imported.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import * as esbuild from 'esbuild';
import { asciiOnly, BUNDLE_OPTIONS } from '../../bin/bundle.mjs';
import { LIBRARIES, projectDir, type Library } from './libraries.js';

/** Prints the process's memory and CPU time as it ends: the start-time runs read them. */
const REPORT =
  'process.stdout.write(JSON.stringify({ ...process.memoryUsage(), cpu: process.cpuUsage() }));';

export interface Entry {
  name: string;
  /** The entry's source file; libraries' entries sit in their project, so that they resolve. */
  file: string;
  /** Run without a loader (a library from node_modules) or through tsx (our TypeScript). */
  loader: 'none' | 'tsx';
  /** Packages left out of the bundle (see Library.externalIfNeeded), when one was needed. */
  external: string[];
}

export interface Entries {
  empty: Entry;
  agent: Entry;
  libraries: { library: Library; alone: Entry; withAgent: Entry }[];
  ours: { simctl: Entry; adb: Entry };
}

/** Every temporary folder this file made: entries and bundles. */
const scratchFolders: string[] = [];

async function scratchFolder(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'simlock-driver-libraries-'));
  scratchFolders.push(dir);
  return dir;
}

/** Removes the entries and bundles (the entries in the libraries' projects stay, they are tiny). */
export async function removeScratch(): Promise<void> {
  for (const dir of scratchFolders.splice(0)) await rm(dir, { recursive: true, force: true });
}

async function writeEntry(file: string, text: string): Promise<string> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, text);
  return file;
}

/** Writes the entries: an empty program, the agent, each library alone and with the agent, ours. */
export async function writeEntries(root: string, libs: string): Promise<Entries> {
  const scratch = await scratchFolder();
  const agentMain = JSON.stringify(join(root, 'agent', 'main.ts'));
  const entry = async (
    name: string,
    file: string,
    text: string,
    loader: Entry['loader'],
  ): Promise<Entry> => ({
    name,
    file: await writeEntry(file, text),
    loader,
    external: [],
  });
  const ours = (source: string, imported: string) =>
    `import { ${imported} } from ${JSON.stringify(join(root, source))};\nglobalThis.__kept = ${imported};\n${REPORT}\n`;
  return {
    empty: await entry('empty program', join(scratch, 'empty.mjs'), `${REPORT}\n`, 'none'),
    agent: await entry('agent', join(scratch, 'agent.mjs'), `import ${agentMain};\n`, 'none'),
    libraries: await Promise.all(
      LIBRARIES.map(async (library) => {
        const dir = join(projectDir(libs, library), '.simlock-bench');
        const keep = `${library.importLine}\nglobalThis.__kept = ${library.imported};\n`;
        return {
          library,
          alone: await entry(library.key, join(dir, 'alone.mjs'), `${keep}${REPORT}\n`, 'none'),
          withAgent: await entry(
            `agent + ${library.key}`,
            join(dir, 'with-agent.mjs'),
            `import ${agentMain};\n${keep}`,
            'none',
          ),
        };
      }),
    ),
    ours: {
      simctl: await entry(
        'our simctl driver',
        join(scratch, 'ours-simctl.mjs'),
        ours('agent/drivers/simctl/simctl.ts', 'SimctlDriver'),
        'tsx',
      ),
      adb: await entry(
        'our adb driver',
        join(scratch, 'ours-adb.mjs'),
        ours('agent/drivers/adb/adb.ts', 'AdbDriver'),
        'tsx',
      ),
    },
  };
}

export interface Bundle {
  /** The bundle's file to run, and the bytes of all its .mjs files (source maps not counted). */
  file: string;
  bytes: number;
  /** Why the repository's settings alone could not build it, when they could not. */
  failure?: string;
}

/** Builds one entry into a folder of its own; retries with `externalIfNeeded` once if it fails. */
export async function buildEntry(
  root: string,
  entry: Entry,
  externalIfNeeded: string[] = [],
): Promise<Bundle> {
  const outdir = await scratchFolder();
  const build = (external: string[]) =>
    esbuild.build({
      ...BUNDLE_OPTIONS,
      absWorkingDir: root,
      entryPoints: { main: entry.file },
      outdir,
      external,
      logLevel: 'silent',
      write: false,
    });
  let failure: string | undefined;
  let result: esbuild.BuildResult<{ write: false }>;
  try {
    result = await build([]);
  } catch (error) {
    if (externalIfNeeded.length === 0) throw error;
    const errors = (error as esbuild.BuildFailure).errors ?? [];
    failure = `${errors.length} errors, the first: ${errors[0]?.text ?? String(error)}`;
    result = await build(externalIfNeeded);
    entry.external = externalIfNeeded;
  }
  let bytes = 0;
  for (const file of result.outputFiles) {
    const text = file.path.endsWith('.mjs') ? asciiOnly(file.text) : undefined;
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, text ?? file.contents);
    if (text !== undefined) bytes += Buffer.byteLength(text);
  }
  return { file: join(outdir, 'main.mjs'), bytes, ...(failure ? { failure } : {}) };
}
