// Cold starts: a new Node process that loads one library (or one of our drivers) and exits, timed
// from spawn to exit, with the CPU time (user + system, all its threads) and memory it reports at
// its end. The CPU time moves less than the wall time when other work shares the machine. The
// programs take turns, run after run, so that a spell of load falls on all of them alike.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { median } from '../harness/index.js';

export interface StartProgram {
  name: string;
  /** Node's arguments: the program's file, after `--import tsx` for our TypeScript. */
  args: string[];
  /** Where tsx is resolved from (the repository). */
  cwd: string;
}

export interface StartFigures {
  name: string;
  command: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** CPU time of the whole process (median). */
  cpuMs: number;
  /** Resident memory at the end of the program (median). */
  rssMiB: number;
}

const Report = z.object({
  rss: z.number(),
  cpu: z.object({ user: z.number(), system: z.number() }),
});

function startOnce(program: StartProgram): Promise<{ ms: number; cpuMs: number; rss: number }> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    const child = spawn(process.execPath, program.args, {
      cwd: program.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - began;
      if (code !== 0) {
        reject(new Error(`${program.name} exited ${code}: ${stderr.trim().slice(0, 500)}`));
        return;
      }
      try {
        const report = Report.parse(JSON.parse(stdout));
        resolve({ ms, cpuMs: (report.cpu.user + report.cpu.system) / 1000, rss: report.rss });
      } catch (error) {
        reject(
          new Error(`${program.name} printed no memory report: ${stdout.slice(0, 200)}`, {
            cause: error,
          }),
        );
      }
    });
  });
}

export async function measureStarts(
  programs: readonly StartProgram[],
  runs: number,
): Promise<StartFigures[]> {
  const times = programs.map(() => [] as number[]);
  const cpu = programs.map(() => [] as number[]);
  const rss = programs.map(() => [] as number[]);
  for (let run = 0; run < runs; run++) {
    for (const [index, program] of programs.entries()) {
      const result = await startOnce(program);
      times[index]!.push(result.ms);
      cpu[index]!.push(result.cpuMs);
      rss[index]!.push(result.rss);
    }
  }
  return programs.map((program, index) => ({
    name: program.name,
    command: `node ${program.args.join(' ')}`,
    medianMs: median(times[index]!),
    minMs: Math.min(...times[index]!),
    maxMs: Math.max(...times[index]!),
    cpuMs: median(cpu[index]!),
    rssMiB: median(rss[index]!) / 2 ** 20,
  }));
}
