// The web page is built by Vite into console/web/dist. The console builds it when it is missing
// or older than its sources (a hash of them is kept beside it), so a fresh clone, `npm run up`
// and the tests all serve the page of the code they run. A lock keeps two builds apart.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../runtime/index.js';

const root = packageRoot(import.meta.url);
export const WEB_ROOT = join(root, 'console', 'web', 'dist');
const SOURCES = ['console/web', 'console/model', 'api'];
const HASH_FILE = join(WEB_ROOT, '.sources-hash');
const LOCK = join(root, 'console', 'web', '.build-lock');

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.name === 'dist' || entry.name === 'node_modules' || entry.name.startsWith('.'))
      continue;
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (!entry.name.endsWith('.test.ts')) files.push(path);
  }
  return files;
}

async function sourcesHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await Promise.all(SOURCES.map((dir) => filesUnder(join(root, dir))))).flat();
  for (const file of files.sort()) hash.update(file).update(await readFile(file));
  return hash.digest('hex');
}

async function lock(timeoutMs: number): Promise<() => Promise<void>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await mkdir(LOCK);
      return () => rm(LOCK, { recursive: true, force: true });
    } catch {
      // A lock left by a build that died long ago is taken over.
      const since = await stat(LOCK).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (since > 5 * 60_000) await rm(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`the console build lock ${LOCK} is still held`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Builds the web page unless the built one is of these sources; answers where it is. */
export async function ensureConsoleBuilt(
  log: (line: string) => void = () => undefined,
): Promise<string> {
  const wanted = await sourcesHash();
  const built = () => readFile(HASH_FILE, 'utf8').catch(() => '');
  if ((await built()) === wanted) return WEB_ROOT;
  const unlock = await lock(180_000);
  try {
    if ((await built()) === wanted) return WEB_ROOT;
    log('building the console page (vite build)');
    const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
    const output = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [
          vite,
          'build',
          '--config',
          join(root, 'console', 'web', 'vite.config.ts'),
          '--logLevel',
          'warn',
        ],
        // NODE_ENV as the caller has it (vitest says "test") would bring React's development build.
        {
          cwd: root,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NODE_ENV: 'production' },
        },
      );
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0
          ? resolve(text)
          : reject(new Error(`vite build failed (exit ${code}):\n${text}`)),
      );
    });
    if (output.trim()) log(output.trim());
    await writeFile(HASH_FILE, wanted);
    return WEB_ROOT;
  } finally {
    await unlock();
  }
}
