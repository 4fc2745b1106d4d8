// The doctor's own checks of the data directory, its --fix rules (refused while an agent runs),
// its exit codes and what its table and JSON show. Drivers' findings: the drivers' doctor tests.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readPidFile, removePidFile, writePidFile } from './agent-pid.js';
import { doctorJson, doctorTable } from './doctor-report.js';
import { doctorExitCode, DoctorRefusal, runDoctor, type DoctorRun } from './doctor.js';
import type { DoctorFinding } from './drivers/doctor-finding.js';

let root: string;
let dataDir: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'simlock-doctor-unit-'));
  dataDir = join(root, 'data');
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const deadPid = 2 ** 22 + 1; // above Linux's largest pid_max: never a running process

describe('the doctor’s look at the data directory', () => {
  it('reports a missing data directory and makes it with --fix', async () => {
    const report = await runDoctor({ dataDir, driver: undefined, fix: false });
    expect(report.findings.map((finding) => finding.kind)).toEqual(['agent.data-dir-missing']);
    expect(doctorExitCode(report)).toBe(1);
    const fixed = await runDoctor({ dataDir, driver: undefined, fix: true });
    expect(fixed.repairs.map((repair) => [repair.done, repair.said])).toEqual([[true, 'made it']]);
    expect(fixed.left).toEqual([]);
    expect(doctorExitCode(fixed)).toBe(0);
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('removes a stale pid file and moves unreadable stage timings aside, never deleting them', async () => {
    await writePidFile(dataDir, deadPid);
    await writeFile(join(dataDir, 'stage-timings.json'), '{"boot/iPhone 16": [1, "two"]');
    const report = await runDoctor({ dataDir, driver: undefined, fix: false });
    expect(report.findings.map((finding) => [finding.kind, finding.subject])).toEqual([
      ['agent.stale-pid', join(dataDir, 'agent.pid')],
      ['agent.unreadable-timings', join(dataDir, 'stage-timings.json')],
    ]);
    const fixed = await runDoctor({ dataDir, driver: undefined, fix: true });
    expect(doctorExitCode(fixed)).toBe(0);
    expect((await readdir(dataDir)).sort()).toEqual(['stage-timings.json.unreadable']);
    expect(await readFile(join(dataDir, 'stage-timings.json.unreadable'), 'utf8')).toContain(
      '"two"',
    );
  });

  it('refuses --fix while an agent runs on the data directory, and reports', async () => {
    await writePidFile(dataDir, process.pid);
    await writeFile(join(dataDir, 'stage-timings.json'), 'not json');
    await expect(runDoctor({ dataDir, driver: undefined, fix: true })).rejects.toThrow(
      DoctorRefusal,
    );
    expect(await readFile(join(dataDir, 'stage-timings.json'), 'utf8')).toBe('not json');
    const report = await runDoctor({ dataDir, driver: undefined, fix: false });
    expect(report.agentPid).toBe(process.pid);
    expect(doctorTable(report)).toContain(
      `An agent runs on this data directory (pid ${process.pid}).`,
    );
  });

  it('keeps the pid file of the agent that wrote it', async () => {
    await writePidFile(dataDir, process.pid);
    await removePidFile(dataDir, process.pid + 1);
    expect(await readPidFile(dataDir)).toEqual({ state: 'running', pid: process.pid });
    await removePidFile(dataDir, process.pid);
    expect(await readPidFile(dataDir)).toEqual({ state: 'none' });
  });
});

const leftover: DoctorFinding = {
  kind: 'simctl.unavailable',
  source: 'simctl',
  subject: '2C3D4E5F-6A7B-4C8D-9E0F-1A2B3C4D5E6F',
  problem: '"simlock-iphone-14-0f0f0f" is unavailable (runtime profile not found)',
  fix: 'delete it (xcrun simctl --set /data/simctl-set delete 2C3D4E5F-6A7B-4C8D-9E0F-1A2B3C4D5E6F)',
  severity: 'problem',
};
const lookalike: DoctorFinding = {
  kind: 'simctl.unrecorded-lookalike',
  source: 'simctl',
  subject: '7E8F9A0B-1C2D-4E3F-8A4B-5C6D7E8F9A0B',
  problem: '"simlock iPhone 16 d4e5f6" is named like simlock\'s but not recorded',
  severity: 'notice',
};
const tallies = [{ source: 'simctl', what: 'simulators of the own set taken in', count: 3 }];

describe('the doctor’s report', () => {
  it('shows a report run as a table: finding, device or file, what --fix would do, the problem', () => {
    const run: DoctorRun = {
      dataDir: '/data',
      fix: false,
      findings: [leftover, lookalike],
      tallies,
      repairs: [],
      left: [leftover],
    };
    expect(doctorExitCode(run)).toBe(1);
    expect(doctorTable(run)).toBe(
      [
        'simlock-agent doctor: /data, report only (--fix repairs)',
        '',
        'FINDING                               DEVICE/FILE                           --FIX WOULD',
        `simctl.unavailable                    ${leftover.subject}  ${leftover.fix}`,
        `  ${leftover.problem}`,
        `simctl.unrecorded-lookalike (notice)  ${lookalike.subject}  nothing: for a person`,
        `  ${lookalike.problem}`,
        '',
        'simctl: 3 simulators of the own set taken in',
        '',
        '1 problem: --fix repairs 1, 0 are for a person.',
        '',
      ].join('\n'),
    );
  });

  it('shows what --fix did, and says healthy when nothing is left', () => {
    const run: DoctorRun = {
      dataDir: '/data',
      fix: true,
      findings: [leftover, lookalike],
      tallies,
      repairs: [
        { finding: leftover, done: true, said: 'deleted' },
        { finding: lookalike, done: false, said: 'left for a person' },
      ],
      left: [],
    };
    expect(doctorExitCode(run)).toBe(0);
    const table = doctorTable(run);
    expect(table).toContain('--FIX DID');
    expect(table).toContain(`${leftover.subject}  deleted\n`);
    expect(table).toContain(`${lookalike.subject}  NOT FIXED: left for a person\n`);
    expect(table.trimEnd().split('\n').pop()).toBe('Healthy: 1 finding fixed.');
    const json = JSON.parse(doctorJson(run)) as Record<string, unknown>;
    expect(json).toMatchObject({
      dataDir: '/data',
      fix: true,
      healthy: true,
      findings: [
        { kind: leftover.kind, repair: { done: true, said: 'deleted' } },
        { kind: lookalike.kind, repair: { done: false, said: 'left for a person' } },
      ],
      tallies,
      left: [],
    });
  });

  it('says healthy for a run without findings', () => {
    const run: DoctorRun = {
      dataDir: '/d',
      fix: false,
      findings: [],
      tallies,
      repairs: [],
      left: [],
    };
    expect(doctorTable(run)).toContain('No findings.');
    expect(doctorTable(run).trimEnd().split('\n').pop()).toBe('Healthy.');
  });
});
