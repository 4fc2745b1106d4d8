import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../tools/index.js';
import { heapAfterCollection, writeHeapSnapshot } from './inspector.js';

// A process that keeps 32 MiB (arrays of 2^17 doubles) and makes as much garbage every 50 ms; it
// says so once it has made some five times.
const MIB = 'Array.from({ length: 32 }, (_, i) => new Array(131072).fill(i + 0.5))';
const PROGRAM = `globalThis.kept = ${MIB}; let made = 0; setInterval(() => {
  globalThis.made = ${MIB}.length;
  if (++made === 5) process.stderr.write('garbage made\\n');
}, 50);`;

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGKILL');
  child = undefined;
});

async function inspected(): Promise<number> {
  const port = await freePort();
  // An ES module, as the agent's and the controller's bundles are: no `require` of its own.
  child = spawn(
    process.execPath,
    [`--inspect=127.0.0.1:${port}`, '--input-type=module', '-e', PROGRAM],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  // Once it has made garbage: a reading must leave it out.
  await new Promise<void>((resolve, reject) => {
    child?.stderr?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('garbage made')) resolve();
    });
    child?.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  return port;
}

describe('the V8 inspector of a process', () => {
  it('reads the heap it keeps after a full collection, without its garbage', async () => {
    const port = await inspected();
    const kept = (await heapAfterCollection(port)) / 2 ** 20;
    expect(kept).toBeGreaterThan(32);
    expect(kept).toBeLessThan(32 + 16);
  });

  it('writes a heap snapshot that names what the process keeps', async () => {
    const port = await inspected();
    const dir = await mkdtemp(join(tmpdir(), 'simlock-heap-'));
    try {
      const path = join(dir, 'a.heapsnapshot');
      await writeHeapSnapshot(port, path);
      const snapshot = JSON.parse(await readFile(path, 'utf8')) as {
        snapshot: { node_count: number };
        strings: string[];
      };
      expect(snapshot.snapshot.node_count).toBeGreaterThan(1000);
      expect(snapshot.strings).toContain('kept');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
