// The stamp that keys the bundles in a clone: a change to any source that goes into a bundle gives
// new bundles (so a process never runs stale code), and a change to a test does not.
import { mkdir, mkdtemp, readFile, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asciiOnly, buildBundles, sourceStamp } from '../bin/bundle.mjs';
import { packageRoot } from '../runtime/index.js';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'simlock-stamp-'));
  await mkdir(join(root, 'api'));
  await mkdir(join(root, 'cli', 'actions'), { recursive: true });
  await writeFile(join(root, 'api', 'reasons.ts'), 'export const A = 1;\n');
  await writeFile(join(root, 'cli', 'actions', 'lease.ts'), 'export const B = 2;\n');
  await writeFile(join(root, 'package-lock.json'), '{}\n');
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('the bundles’ source stamp', () => {
  it('is the same while nothing changes', () => {
    expect(sourceStamp(root)).toBe(sourceStamp(root));
  });

  it('changes when a source is edited, even to the same length', async () => {
    const before = sourceStamp(root);
    await writeFile(join(root, 'cli', 'actions', 'lease.ts'), 'export const B = 3;\n');
    await utimes(join(root, 'cli', 'actions', 'lease.ts'), new Date(), new Date(Date.now() + 5000));
    expect(sourceStamp(root)).not.toBe(before);
  });

  it('changes when a source is added or the dependencies change', async () => {
    const before = sourceStamp(root);
    await writeFile(join(root, 'api', 'new.ts'), 'export {};\n');
    const added = sourceStamp(root);
    expect(added).not.toBe(before);
    await writeFile(join(root, 'package-lock.json'), '{"lockfileVersion":3}\n');
    expect(sourceStamp(root)).not.toBe(added);
  });

  it('does not change for tests, which no bundle holds', async () => {
    const before = sourceStamp(root);
    await writeFile(join(root, 'cli', 'actions', 'lease.test.ts'), 'export {};\n');
    expect(sourceStamp(root)).toBe(before);
  });
});

describe('the bundles’ text', () => {
  // It builds the agent's bundle with esbuild: 1-3 s of CPU alone, several times that while the
  // lint lane and other test files share the two cores, so not the 5 s meant for pure functions.
  it(
    'is ASCII, so that V8 holds each bundle’s source at one byte a character',
    { timeout: 30_000 },
    async () => {
      const out = await mkdtemp(join(tmpdir(), 'simlock-bundle-'));
      try {
        await buildBundles(packageRoot(import.meta.url), out, ['agent']);
        const files = (await readdir(out)).filter((name) => name.endsWith('.mjs'));
        expect(files).toContain('agent.mjs');
        for (const name of files) {
          const text = await readFile(join(out, name), 'utf8');
          expect(text.length).toBeGreaterThan(0);
          expect(text.match(/[\u0080-\uffff]/)?.[0], name).toBeUndefined();
        }
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    },
  );

  it('escapes a character outside ASCII so that it means the same in code and stays text in a comment', () => {
    const source = "return ['’', `é${'😀'}`, /[’]/.test('’'), /^😀$/u.test('😀')]; // it’s — 😀";
    const escaped = asciiOnly(source);
    expect(escaped).not.toMatch(/[\u0080-\uffff]/);
    expect(escaped).toContain('// it\\u2019s');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the point: the escaped text runs
    const run = (text: string) => (new Function(text) as () => unknown)();
    expect(run(escaped)).toEqual(run(source));
  });
});

describe('packageRoot', () => {
  it('finds the folder of simlock’s package.json from a module at any depth', () => {
    const fromHere = packageRoot(import.meta.url);
    expect(packageRoot(new URL('../runtime/package-root.ts', import.meta.url).href)).toBe(fromHere);
    expect(fromHere).toBe(
      packageRoot(new URL('../agent/drivers/adb/adb.ts', import.meta.url).href),
    );
  });

  it('says where it looked when there is none', () => {
    expect(() => packageRoot(`file://${tmpdir()}/x.mjs`)).toThrow(/no simlock package.json above/);
  });
});
