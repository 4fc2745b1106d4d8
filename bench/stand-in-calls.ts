// What one call of a stand-in device tool (test/stand-ins/) costs: wall time and CPU (this process,
// where the stand-in server runs, and its children) per call, for each kind of stand-in, called as
// the drivers call tools (createCommandRunner: an external process found on PATH), each launch in
// turn: a Node process per call, then the shims and their server (ADR 0022). `--calls N` (100).
// Run: tools/with-node.sh node --import tsx bench/stand-in-calls.ts
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCommandRunner, type CommandRunner } from '../agent/index.js';
import { androidWorld, SimctlStandIn, StandIns } from '../test/index.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '100' } } });
const calls = Number(values.calls);

/** CPU seconds of this process and of its children that were waited for (/proc/self/stat). */
function cpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // utime, stime, cutime, cstime are fields 14–17 (1-based); fields[0] here is field 3.
  const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
  return ticks / 100;
}

async function measure(name: string, run: CommandRunner, argv: [string, ...string[]]) {
  const first = await run(argv);
  if (first.exitCode !== 0) throw new Error(`${argv.join(' ')}: ${first.stderr}`);
  const times: number[] = [];
  const cpuBefore = cpuSeconds();
  const wallBefore = performance.now();
  for (let index = 0; index < calls; index++) {
    const start = performance.now();
    await run(argv);
    times.push(performance.now() - start);
  }
  const wall = performance.now() - wallBefore;
  const cpu = cpuSeconds() - cpuBefore;
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(
    `${name.padEnd(34)} median ${median.toFixed(1).padStart(6)} ms, mean ${(wall / calls).toFixed(1).padStart(6)} ms, CPU ${((cpu * 1000) / calls).toFixed(1).padStart(6)} ms per call`,
  );
}

// The floor: starting a bash script that exits at once (what a shim costs before it asks anything).
const floorDir = await mkdtemp(join(tmpdir(), 'simlock-stand-in-calls-'));
await writeFile(join(floorDir, 'exits'), '#!/bin/bash\nexit 0\n', { mode: 0o755 });
await measure('a bash script that exits', createCommandRunner(), [join(floorDir, 'exits')]);
await rm(floorDir, { recursive: true });

const host = readFileSync(
  join(
    import.meta.dirname,
    '../agent/drivers/simctl/testdata/list-devices-runtimes-devicetypes.json',
  ),
  'utf8',
);
for (const launch of ['processes', 'server'] as const) {
  console.log(`${launch}:`);
  const rules = await StandIns.create({ tool: [{ argv: ['hello'], stdout: 'hi\n' }] }, { launch });
  await measure('rules stand-in (stand-in.ts)', createCommandRunner({ env: rules.env }), [
    'tool',
    'hello',
  ]);
  await rules.cleanup();

  const simctl = await SimctlStandIn.create({ host, launch });
  await measure('xcrun simctl list -j devices', createCommandRunner({ env: simctl.env }), [
    'xcrun',
    'simctl',
    'list',
    '-j',
    'devices',
  ]);
  await simctl.cleanup();

  const world = await androidWorld({ launch });
  const adb = createCommandRunner({ env: world.standIns.env });
  await measure('adb devices', adb, ['adb', 'devices']);
  await measure('emulator -list-avds', adb, ['emulator', '-list-avds']);
  await world.standIns.cleanup();
}
