// Where the benchmarks find the repository (the CRDs, the controller's sources) and where they
// write what they measure (bench/out/, not tracked).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const OUT_DIR = join(REPO_ROOT, 'bench', 'out');

/** A run's folder under bench/out/ (logs, profiles, JSON). */
export async function outDir(name: string): Promise<string> {
  const dir = join(OUT_DIR, name);
  await mkdir(dir, { recursive: true });
  return dir;
}
