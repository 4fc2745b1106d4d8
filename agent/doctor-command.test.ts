// `simlock-agent doctor` as a person runs it on a host with simctl and adb (the stand-ins, as real
// processes): a report that exits 1, --fix -o json that exits 0, a second report that says
// healthy; --fix refused (exit 2) while an agent runs; a bad flag exits 2.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { androidWorld, type AndroidWorld } from '../test/stand-ins/android-world.js';
import { SimctlStandIn } from '../test/stand-ins/simctl-stand-in.js';
import { readTestdata } from '../test/stand-ins/stand-in.js';
import { writePidFile } from './agent-pid.js';
import { doctorCommand } from './doctor-command.js';

const LEFTOVER = '2C3D4E5F-6A7B-4C8D-9E0F-1A2B3C4D5E6F';
const PERSON = '3B1F7E2A-6C4D-4E8F-9A0B-1C2D3E4F5A6B';

let world: AndroidWorld;
let simctl: SimctlStandIn;
let configPath: string;
let env: NodeJS.ProcessEnv;

beforeEach(async () => {
  world = await androidWorld();
  simctl = await SimctlStandIn.create({
    host: await readTestdata(
      new URL('./drivers/simctl/simctl.test.ts', import.meta.url).href,
      'list-devicetypes-runtimes.json',
    ),
    defaultSet: [{ udid: PERSON, name: 'iPhone 16', state: 'Booted', boots: 1 }],
  });
  configPath = join(world.dataDir, '..', 'agent.yaml');
  await writeFile(
    configPath,
    [
      'name: mac-mini-1',
      'drivers: [simctl, adb]',
      `dataDir: ${world.dataDir}`,
      'adb: { serverPort: 5137 }',
      '',
    ].join('\n'),
  );
  env = { ...world.standIns.env, PATH: `${simctl.dir}:${world.standIns.env.PATH ?? ''}` };
});

afterEach(async () => {
  await simctl.cleanup();
  await world.standIns.cleanup();
});

async function doctor(...args: string[]) {
  let out = '';
  let err = '';
  const code = await doctorCommand(['--config', configPath, ...args], {
    env,
    out: (text) => (out += text),
    err: (text) => (err += text),
  });
  return { code, out, err };
}

describe('simlock-agent doctor', { timeout: 90_000 }, () => {
  it('reports (exit 1), fixes (exit 0, JSON), then reports healthy (exit 0)', async () => {
    await mkdir(join(world.dataDir, 'simctl-set'), { recursive: true });
    await simctl.addDevice(join(world.dataDir, 'simctl-set'), {
      udid: LEFTOVER,
      name: 'simlock-iphone-14-0f0f0f',
      runtime: 'com.apple.CoreSimulator.SimRuntime.iOS-16-4',
    });
    await mkdir(join(world.dataDir, 'avd'), { recursive: true });
    await writeFile(join(world.dataDir, 'avd', 'simlock-gone.ini'), 'path=/nowhere/gone.avd\n');
    await writePidFile(world.dataDir, 2 ** 22 + 1);

    const report = await doctor();
    expect(report.err).toBe('');
    expect(report.code).toBe(1);
    const lines = report.out.split('\n');
    expect(lines[0]).toBe(`simlock-agent doctor: ${world.dataDir}, report only (--fix repairs)`);
    expect(
      lines
        .filter((line) => /^[a-z]+\.[a-z-]+ /.test(line))
        .map((line) => line.split(/\s+/).slice(0, 2)),
    ).toEqual([
      ['agent.stale-pid', join(world.dataDir, 'agent.pid')],
      ['simctl.unavailable', LEFTOVER],
      ['adb.ini-without-avd', 'simlock-gone'],
    ]);
    expect(report.out).toContain('simctl: 0 simulators of the own set taken in');
    expect(lines.at(-2)).toBe('3 problems: --fix repairs 3, 0 are for a person.');

    const fixed = await doctor('--fix', '-o', 'json');
    expect(fixed.code).toBe(0);
    const json = JSON.parse(fixed.out) as {
      healthy: boolean;
      findings: Array<{ repair: { done: boolean } }>;
    };
    expect(json.healthy).toBe(true);
    expect(json.findings.map((finding) => finding.repair.done)).toEqual([true, true, true]);

    const again = await doctor();
    expect(again.code).toBe(0);
    expect(again.out).toContain('No findings.');
    expect(again.out.trimEnd().split('\n').pop()).toBe('Healthy.');
    expect((await simctl.devices()).map((sim) => [sim.udid, sim.boots])).toEqual([[PERSON, 1]]);
  });

  it('refuses --fix while an agent runs on the data directory (exit 2), and still reports', async () => {
    await writePidFile(world.dataDir, process.pid);
    await rm(join(world.dataDir, 'stage-timings.json'), { force: true });
    const refused = await doctor('--fix');
    expect(refused.code).toBe(2);
    expect(refused.out).toBe('');
    expect(refused.err).toBe(
      `simlock-agent doctor: an agent runs on ${world.dataDir} (pid ${process.pid}): stop it before --fix, or run without --fix to report only\n`,
    );
    const report = await doctor();
    expect(report.code).toBe(0);
    expect(report.out).toContain(`An agent runs on this data directory (pid ${process.pid}).`);
  });

  it('exits 2 on a flag it does not know', async () => {
    const wrong = await doctor('--fixx');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('Unknown argument: fixx');
  });
});
