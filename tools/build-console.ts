// `npm run build:console`: builds the console's web page into console/web/dist when its sources
// changed, and prints the size of what a browser downloads, gzipped (docs/CONSOLE.md records it).
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ensureConsoleBuilt } from '../console/index.js';

const root = await ensureConsoleBuilt((line) => console.error(line));
const assets = join(root, 'assets');
let total = 0;
for (const file of (await readdir(assets)).sort()) {
  const bytes = await readFile(join(assets, file));
  const gzipped = gzipSync(bytes, { level: 9 }).length;
  total += gzipped;
  console.log(
    `${file}: ${(bytes.length / 1024).toFixed(1)} KiB, ${(gzipped / 1024).toFixed(1)} KiB gzipped`,
  );
}
console.log(`total gzipped: ${(total / 1024).toFixed(1)} KiB`);
