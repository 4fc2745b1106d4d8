// How fast the plugin starts: the release's single binary (tools/release/, Node inside it; with
// V8's code cache in its blob as built on its own platform, and without, as built on another)
// against today's plugin in a clone (bin/kubectl-simlock: sh, then node bin/launch.mjs, then the
// warm esbuild bundle). Each command is started --runs times per side, the sides in turn, through
// /usr/bin/time: wall time and CPU (user + system) per start, medians and p90.
//   - `--help`: the start alone (yargs, every command's description);
//   - `list --requests -A` against a control plane of the benchmark's own (CRDs, nothing waiting):
//     the start, a kubeconfig read and one list over HTTPS.
//
//   node --import tsx bench/plugin-start.ts [--runs 20] [--json [FILE]]
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { hostPluginBinary } from '../tools/index.js';
import {
  CommandLine,
  REPO_ROOT,
  log,
  machineName,
  median,
  percentile,
  startBenchControlPlane,
} from './harness/index.js';

const args = new CommandLine();
args.only(['--runs', '--json']);
const RUNS = args.integer('--runs', 20, 1);
const JSON_PATH = args.has('--json')
  ? (args.optionalValue('--json') ?? join('bench', 'out', 'plugin-start.json'))
  : undefined;
const run = promisify(execFile);

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** One start through /usr/bin/time: its wall time and the CPU of the process and its children. */
async function start(command: string, commandArgs: string[]): Promise<Sample> {
  const { stderr } = await run('/usr/bin/time', ['-f', 'TIME %e %U %S', command, ...commandArgs], {
    maxBuffer: 16 << 20,
  }).catch((error: { stderr?: string; code?: number }) => {
    // A usage error exits non-zero; time still reports.
    if (error.stderr?.includes('TIME ')) return { stderr: error.stderr };
    throw error;
  });
  const [wall = 0, user = 0, system = 0] = (/TIME (\S+) (\S+) (\S+)/.exec(stderr) ?? [])
    .slice(1)
    .map(Number);
  return { wallMs: wall * 1000, cpuMs: (user + system) * 1000 };
}

const started = Date.now();
const { binary, builtInMs } = await hostPluginBinary(REPO_ROOT, log);
if (builtInMs !== undefined) log(`built the single binary in ${builtInMs} ms`);
const portable = await hostPluginBinary(REPO_ROOT, log, { codeCache: false });
const sides = {
  'single binary': binary,
  'single binary, no code cache': portable.binary,
  'clone (bin/kubectl-simlock)': join(REPO_ROOT, 'bin', 'kubectl-simlock'),
};
// The clone's first start after a change builds its bundle: not what is measured.
await start(sides['clone (bin/kubectl-simlock)'], ['--help']);

const plane = await startBenchControlPlane();
const results: Record<string, Record<string, Record<string, number>>> = {};
try {
  const commands: Record<string, string[]> = {
    '--help': ['--help'],
    'list --requests -A': [
      'list',
      '--requests',
      '-A',
      '--kubeconfig',
      plane.controlPlane.kubeconfigPath,
    ],
  };
  const load = (await import('node:os')).loadavg()[0]?.toFixed(2);
  console.log(`${machineName()}; load ${load}; ${RUNS} starts per side and command, in turn`);
  console.log('command               side                          wall p50  p90   CPU p50  p90');
  for (const [name, commandArgs] of Object.entries(commands)) {
    const samples: Record<string, Sample[]> = {};
    for (let round = 0; round < RUNS; round++) {
      for (const [side, command] of Object.entries(sides)) {
        (samples[side] ??= []).push(await start(command, commandArgs));
      }
    }
    results[name] = {};
    for (const [side, list] of Object.entries(samples)) {
      const wall = list.map((sample) => sample.wallMs);
      const cpu = list.map((sample) => sample.cpuMs);
      const figures = {
        wallP50: median(wall),
        wallP90: percentile(wall, 90),
        cpuP50: median(cpu),
        cpuP90: percentile(cpu, 90),
      };
      results[name][side] = figures;
      console.log(
        `${name.padEnd(21)} ${side.padEnd(29)} ${String(Math.round(figures.wallP50)).padStart(5)} ${String(Math.round(figures.wallP90)).padStart(5)}   ${String(Math.round(figures.cpuP50)).padStart(5)} ${String(Math.round(figures.cpuP90)).padStart(5)}`,
      );
    }
  }
} finally {
  await plane.stop();
}
if (JSON_PATH) {
  await mkdir(dirname(JSON_PATH), { recursive: true });
  await writeFile(
    JSON_PATH,
    JSON.stringify({ machine: machineName(), runs: RUNS, results }, null, 2),
  );
}
log(`done in ${Math.round((Date.now() - started) / 1000)} s`);
