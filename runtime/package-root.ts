// Where simlock's files are (package.json, console/web/dist, bin/): the nearest folder above a
// module whose package.json is simlock's. A module run from its source and the same module run
// from a bundle (node_modules/.cache/simlock/bundle/…, or /app/dist/bundle in the image) sit at
// different depths, so a path relative to the module would point elsewhere in one of them.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageRoot(moduleUrl: string): string {
  let folder = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (isSimlockPackage(join(folder, 'package.json'))) return folder;
    const parent = dirname(folder);
    if (parent === folder) throw new Error(`no simlock package.json above ${moduleUrl}`);
    folder = parent;
  }
}

function isSimlockPackage(file: string): boolean {
  try {
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return (parsed as { name?: unknown } | null)?.name === 'simlock';
  } catch {
    return false;
  }
}
