// What each process's code costs in memory before it does anything: every bundle (bin/bundle.mjs)
// is built into a folder of its own and started with --help, which loads all of its code; the
// process reports its memory after two full collections as it exits. Medians of several starts.
// RSS holds the bundle's source text (kept by V8 outside its heap: "external"), its compiled code
// and Node itself; heap used is what V8's heap holds.
//
//   node --import tsx bench/bundle-memory.ts [--runs 5] [--json [FILE]]
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { buildBundles } from '../bin/bundle.mjs';
import { packageRoot } from '../runtime/index.js';
import { CommandLine, machineName, median } from './harness/index.js';

const COMPONENTS = ['agent', 'controller', 'proxy', 'console'] as const;
const Memory = z.object({ rss: z.number(), heapUsed: z.number(), external: z.number() });
type Memory = z.infer<typeof Memory>;

const args = new CommandLine();
args.only(['--runs', '--json']);
const RUNS = args.integer('--runs', 5, 1);
const JSON_PATH = args.has('--json')
  ? (args.optionalValue('--json') ?? join('bench', 'out', 'bundle-memory.json'))
  : undefined;

const dir = await mkdtemp(join(tmpdir(), 'simlock-bundle-memory-'));
try {
  await buildBundles(packageRoot(import.meta.url), dir);
  const report = join(dir, 'report-memory.mjs');
  await writeFile(
    report,
    `process.on('exit', () => { globalThis.gc(); globalThis.gc();
  const { rss, heapUsed, external } = process.memoryUsage();
  process.stderr.write('\\nmemory ' + JSON.stringify({ rss, heapUsed, external }) + '\\n'); });\n`,
  );
  const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const results: Record<string, Memory> = {};
  console.log(`${machineName()}; medians of ${RUNS} starts`);
  console.log('component    RSS MiB  heap used MiB  external MiB');
  for (const component of COMPONENTS) {
    const runs: Memory[] = [];
    for (let run = 0; run < RUNS; run++)
      runs.push(await measure(report, join(dir, `${component}.mjs`)));
    const result = {
      rss: median(runs.map((m) => m.rss)),
      heapUsed: median(runs.map((m) => m.heapUsed)),
      external: median(runs.map((m) => m.external)),
    };
    results[component] = result;
    console.log(
      `${component.padEnd(11)} ${mib(result.rss).padStart(8)} ${mib(result.heapUsed).padStart(14)} ${mib(result.external).padStart(13)}`,
    );
  }
  if (JSON_PATH)
    await writeFile(
      JSON_PATH,
      JSON.stringify({ machine: machineName(), runs: RUNS, results }, null, 2),
    );
} finally {
  await rm(dir, { recursive: true, force: true });
}

/** Starts one bundle with --help and reads the memory it reports as it exits. */
function measure(report: string, bundle: string): Promise<Memory> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', report, bundle, '--help'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const line = stderr.split('\n').find((text) => text.startsWith('memory '));
      if (!line)
        return reject(new Error(`${bundle} --help reported no memory: ${stderr.slice(-500)}`));
      resolve(Memory.parse(JSON.parse(line.slice('memory '.length))));
    });
  });
}
