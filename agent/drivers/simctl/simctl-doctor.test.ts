// The doctor over the simctl stand-in: in the own set an unavailable simulator (its runtime was
// removed) is deleted and the healthy ones are taken in; in default-recorded the record decides,
// a simulator merely named like simlock's is reported and left, and the person's simulators are
// listed the same before and after, never named in a call.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StandInSimulator } from '../../../test/stand-ins/simctl-stand-in.js';
import { simctlPerTest } from '../../../test/stand-ins/simctl-per-test.js';
import { SIMLOCK_NAME } from './simctl-doctor.js';

const PERSON = '3B1F7E2A-6C4D-4E8F-9A0B-1C2D3E4F5A6B';
const PERSON_OLD = '5A6B7C8D-9E0F-4A1B-8C2D-3E4F5A6B7C8D';
const LOOKALIKE = '7E8F9A0B-1C2D-4E3F-8A4B-5C6D7E8F9A0B';
const LEFTOVER = '2C3D4E5F-6A7B-4C8D-9E0F-1A2B3C4D5E6F';
/** Installed once, removed since: its simulators are unavailable. */
const IOS_16_4 = 'com.apple.CoreSimulator.SimRuntime.iOS-16-4';
const IPHONE_16 = { platform: 'ios', model: 'iPhone 16', os: '18.4' } as const;

describe('the simctl doctor', { timeout: 60_000 }, () => {
  const world = simctlPerTest([
    { udid: PERSON, name: 'iPhone 16', state: 'Booted', boots: 1 },
    // A person's simulator whose runtime is gone: unavailable, and still not the agent's.
    { udid: PERSON_OLD, name: 'iPhone 14 old', runtime: IOS_16_4 },
  ]);
  const driver: typeof world.driver = (options) => world.driver(options);

  const persons = async () =>
    (await world.standIn.devices()).filter((sim: StandInSimulator) =>
      [PERSON, PERSON_OLD].includes(sim.udid),
    );

  const callsNaming = async (udids: string[]) =>
    (await world.standIn.calls()).filter((argv) => argv.some((arg) => udids.includes(arg)));

  it('in the own set: deletes an unavailable simulator, takes in the healthy one, touches nothing else', async () => {
    const own = driver();
    await own.listDevices();
    const healthy = await own.create(IPHONE_16, 'simlock-iphone-16-a1b2c3');
    await world.standIn.addDevice(world.setDir, {
      udid: LEFTOVER,
      name: 'simlock-iphone-14-0f0f0f',
      runtime: IOS_16_4,
    });
    const before = await persons();

    const report = await own.inspect();
    expect(report.findings).toEqual([
      {
        kind: 'simctl.unavailable',
        source: 'simctl',
        subject: LEFTOVER,
        problem:
          '"simlock-iphone-14-0f0f0f" is unavailable (runtime profile not found using "System" match policy): a leftover the agent cannot boot',
        fix: `delete it (xcrun simctl --set ${world.setDir} delete ${LEFTOVER})`,
        severity: 'problem',
      },
    ]);
    expect(report.tallies).toEqual([
      { source: 'simctl', what: 'simulators of the own set taken in', count: 1 },
    ]);

    const repairs = await own.repair(report.findings);
    expect(repairs.map((repair) => [repair.done, repair.said])).toEqual([
      [true, `deleted (xcrun simctl --set ${world.setDir} delete ${LEFTOVER})`],
    ]);
    expect((await world.standIn.devices(world.setDir)).map((sim) => sim.udid)).toEqual([
      healthy.id,
    ]);
    expect(await own.inspect()).toEqual({
      findings: [],
      tallies: [{ source: 'simctl', what: 'simulators of the own set taken in', count: 1 }],
    });

    // The default set: listed the same before and after, and never named by the doctor.
    expect(await persons()).toEqual(before);
    expect(await callsNaming([PERSON, PERSON_OLD, 'all', 'unavailable', 'booted'])).toEqual([]);
    expect((await world.standIn.calls()).filter((argv) => argv[1] !== '--set')).toEqual([]);
  });

  it('in default-recorded: the record decides; a look-alike and the person’s simulators are left alone', async () => {
    const recorded = driver({ deviceSet: 'default-recorded' });
    await recorded.listDevices();
    const kept = await recorded.create(IPHONE_16, 'aaaaaa');
    const vanished = await recorded.create(IPHONE_16, 'bbbbbb');
    const broken = await recorded.create(IPHONE_16, 'cccccc');
    // A person deletes one; another's runtime goes away.
    await world.standIn.removeDevice(undefined, vanished.id);
    await world.standIn.removeDevice(undefined, broken.id);
    await world.standIn.addDevice(undefined, {
      udid: broken.id,
      name: broken.name,
      runtime: IOS_16_4,
    });
    // Someone names a simulator like simlock's: not recorded, so not simlock's.
    await world.standIn.addDevice(undefined, { udid: LOOKALIKE, name: 'simlock iPhone 16 d4e5f6' });
    const before = await persons();
    const lookalikeBefore = (await world.standIn.devices()).find((sim) => sim.udid === LOOKALIKE);
    await world.standIn.clearCalls();

    const report = await recorded.inspect();
    expect(
      report.findings.map((finding) => [finding.kind, finding.subject, finding.severity]),
    ).toEqual([
      ['simctl.recorded-missing', vanished.id, 'problem'],
      ['simctl.unavailable', broken.id, 'problem'],
      ['simctl.unrecorded-lookalike', LOOKALIKE, 'notice'],
    ]);
    expect(report.findings[2]!.fix).toBeUndefined();
    expect(report.tallies).toEqual([
      { source: 'simctl', what: 'recorded simulators taken in', count: 1 },
      { source: 'simctl', what: "others' simulators of the default set left alone", count: 2 },
    ]);

    const repairs = await recorded.repair(report.findings);
    expect(repairs.map((repair) => [repair.finding.subject, repair.done])).toEqual([
      [vanished.id, true],
      [broken.id, true],
      [LOOKALIKE, false],
    ]);
    const record = JSON.parse(
      await readFile(join(world.dataDir, 'simctl-created.json'), 'utf8'),
    ) as {
      created: Array<{ udid: string }>;
    };
    expect(record.created.map((entry) => entry.udid)).toEqual([kept.id]);
    expect((await recorded.inspect()).findings.map((finding) => finding.kind)).toEqual([
      'simctl.unrecorded-lookalike',
    ]);

    expect(await persons()).toEqual(before);
    expect((await world.standIn.devices()).find((sim) => sim.udid === LOOKALIKE)).toEqual(
      lookalikeBefore,
    );
    expect(await callsNaming([PERSON, PERSON_OLD, LOOKALIKE, 'all', 'unavailable'])).toEqual([]);
    const deletes = (await world.standIn.calls()).filter((argv) => argv.includes('delete'));
    expect(deletes).toEqual([['simctl', 'delete', broken.id]]);
  });

  it('in default-recorded: an unreadable record is reported, never touched, and nothing is deleted', async () => {
    const recordPath = join(world.dataDir, 'simctl-created.json');
    await writeFile(recordPath, '{"version": 1, "created": [');
    const recorded = driver({ deviceSet: 'default-recorded' });
    const report = await recorded.inspect();
    expect(report.findings.map((finding) => [finding.kind, finding.subject, finding.fix])).toEqual([
      ['simctl.record-unreadable', recordPath, undefined],
    ]);
    expect(await recorded.repair(report.findings)).toEqual([
      { finding: report.findings[0], done: false, said: 'left for a person' },
    ]);
    expect(await readFile(recordPath, 'utf8')).toBe('{"version": 1, "created": [');
    expect(await world.standIn.calls()).toEqual([]);
  });

  it('knows simlock’s names, and only those', () => {
    for (const name of ['simlock-iphone-16-3fa2c1', 'simlock iPhone 16 Pro 3fa2c1']) {
      expect(SIMLOCK_NAME.test(name), name).toBe(true);
    }
    for (const name of ['iPhone 16', 'simlock', 'simlock-iphone-16', 'my simlock iPhone 3fa2c1']) {
      expect(SIMLOCK_NAME.test(name), name).toBe(false);
    }
  });
});
