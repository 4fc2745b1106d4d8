// The doctor over the Android stand-ins (in process): in the agent's AVD home it takes in a folder
// that lost its .ini, removes an .ini that lost its folder, removes the locks a crashed emulator
// left, stops an emulator on the agent's adb server that is not the agent's, and drops a wipe mark
// of an AVD that is gone. The person's AVDs, emulators and adb server are as they were, and never
// named in a call.
import { spawnSync } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  agentDriver,
  androidWorld,
  AGENT_SERVER_PORT,
  IMAGE_34,
  PERSON_AVD,
  type AndroidWorld,
} from '../../../test/stand-ins/android-world.js';
import { avdIni } from './avd-doctor.js';
import { parseIni } from './adb-output.js';

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
const MEDIUM_34 = { platform: 'android', model: 'Medium Phone', os: '34' } as const;
/** The person's second AVD, which they boot on the agent's adb server by mistake. */
const STRAY_AVD = 'Pixel_8_person';

let world: AndroidWorld;
beforeEach(async () => {
  world = await androidWorld();
});
afterEach(async () => {
  await world.standIns.cleanup();
});

/** An emulator process that died: gone from the tools' state, its lock files left behind. */
function crash(avd: string): void {
  world.standIns.update((state) => {
    for (const [port, emulator] of Object.entries(state.emulators)) {
      if (emulator.avd !== avd) continue;
      delete state.emulators[port];
      for (const server of Object.values(state.servers)) {
        server.emulators = server.emulators.filter((registered) => registered !== Number(port));
      }
    }
  });
}

describe('the adb doctor', { timeout: 60_000 }, () => {
  it('repairs the agent’s AVD home and adb server, and leaves the person’s as they were', async () => {
    const driver = agentDriver(world, { inProcess: true });
    const home = join(world.dataDir, 'avd');
    await driver.listDevices();
    for (const name of ['simlock-crashed', 'simlock-nofolder', 'simlock-noini', 'simlock-ok']) {
      await driver.create(MEDIUM_34, name);
    }
    await rm(join(home, 'simlock-noini.ini'));
    await rm(join(home, 'simlock-nofolder.avd'), { recursive: true });
    const [crashed] = (await driver.listDevices()).devices.filter(
      (d) => d.id === 'simlock-crashed',
    );
    await driver.boot(crashed!);
    crash('simlock-crashed');
    const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
    const locks = ['hardware-qemu.ini.lock', 'multiinstance.lock'].map((file) =>
      join(home, 'simlock-crashed.avd', file),
    );
    for (const lock of locks) await writeFile(lock, String(deadPid));
    // The person boots another AVD of theirs with the agent's server in their environment.
    world.standIns.addAvd(world.standIns.defaultAvdHome, STRAY_AVD, IMAGE_34, 'pixel_7');
    const person = world.standIns.inProcess();
    await person.spawnDetached(['emulator', '-avd', STRAY_AVD, '-port', '5612'], {
      env: { ANDROID_ADB_SERVER_PORT: String(AGENT_SERVER_PORT) },
    });
    await mkdir(join(world.dataDir, 'adb-wipe-at-next-boot'), { recursive: true });
    await writeFile(join(world.dataDir, 'adb-wipe-at-next-boot', 'gone-avd'), '');
    const personBefore = (await world.standIns.state()).emulators['5554'];
    const personFiles = await readFile(
      join(world.standIns.defaultAvdHome, `${PERSON_AVD}.ini`),
      'utf8',
    );
    const callsBefore = (await world.standIns.calls()).length;

    const report = await driver.inspect();
    expect(report.findings.map((finding) => [finding.kind, finding.subject])).toEqual([
      ['adb.stale-lock', locks[0]],
      ['adb.stale-lock', locks[1]],
      ['adb.ini-without-avd', 'simlock-nofolder'],
      ['adb.avd-without-ini', 'simlock-noini'],
      ['adb.foreign-emulator', 'emulator-5612'],
      ['adb.orphan-wipe-mark', join(world.dataDir, 'adb-wipe-at-next-boot', 'gone-avd')],
    ]);
    expect(report.findings.every((finding) => finding.fix !== undefined)).toBe(true);
    expect(report.tallies).toEqual([
      { source: 'adb', what: "AVDs of the agent's home taken in", count: 2 },
      { source: 'adb', what: "emulators on the agent's adb server", count: 1 },
    ]);

    const repairs = await driver.repair(report.findings);
    const doctorCalls = (await world.standIns.calls()).slice(callsBefore);
    expect(repairs.filter((repair) => !repair.done)).toEqual([]);
    for (const lock of locks) expect(await exists(lock)).toBe(false);
    expect(await exists(join(home, 'simlock-nofolder.ini'))).toBe(false);
    const written = parseIni(await readFile(join(home, 'simlock-noini.ini'), 'utf8'));
    expect(written.get('path')).toBe(join(home, 'simlock-noini.avd'));
    expect(written.get('target')).toBe('android-34');
    const state = await world.standIns.state();
    expect(state.emulators['5612']).toBeUndefined();

    // Taken in: listed and bootable again; the crashed one boots again too.
    const listed = (await driver.listDevices()).devices.filter((device) => !device.physical);
    expect(listed.map((device) => device.id).sort()).toEqual([
      'simlock-crashed',
      'simlock-noini',
      'simlock-ok',
    ]);
    await driver.boot(listed.find((device) => device.id === 'simlock-noini')!);
    await driver.shutdown(listed.find((device) => device.id === 'simlock-noini')!);
    expect(await driver.inspect()).toEqual({
      findings: [],
      tallies: [
        { source: 'adb', what: "AVDs of the agent's home taken in", count: 3 },
        { source: 'adb', what: "emulators on the agent's adb server", count: 0 },
      ],
    });

    // The person's emulator, AVD and default server: as they were, never named by the doctor.
    expect((await world.standIns.state()).emulators['5554']).toEqual(personBefore);
    expect(await readFile(join(world.standIns.defaultAvdHome, `${PERSON_AVD}.ini`), 'utf8')).toBe(
      personFiles,
    );
    // The doctor ran adb on the agent's server only; nothing since named the person's emulator.
    expect(
      doctorCalls.filter((call) => call.tool !== 'adb' || call.serverPort !== AGENT_SERVER_PORT),
    ).toEqual([]);
    expect(
      doctorCalls.filter((call) => call.argv.includes('kill')).map((call) => call.argv),
    ).toEqual([['-P', String(AGENT_SERVER_PORT), '-s', 'emulator-5612', 'emu', 'kill']]);
    const since = (await world.standIns.calls()).slice(callsBefore);
    expect(since.filter((call) => call.argv.includes('emulator-5554'))).toEqual([]);
  });

  it('leaves a lock held by a running process, and an emulator that runs its AVD', async () => {
    const driver = agentDriver(world, { inProcess: true });
    await driver.listDevices();
    const made = await driver.create(MEDIUM_34, 'simlock-busy');
    const idle = await driver.create(MEDIUM_34, 'simlock-held');
    await driver.boot(made);
    // A process that runs (this one) holds the other AVD's lock, outside the agent's server.
    const held = join(world.dataDir, 'avd', 'simlock-held.avd', 'hardware-qemu.ini.lock');
    await writeFile(held, String(process.pid));
    const report = await driver.inspect();
    expect(report.findings).toEqual([
      {
        kind: 'adb.held-lock',
        source: 'adb',
        subject: held,
        problem: `${idle.id} is locked by process ${process.pid}, which runs but not on the agent's adb server`,
        severity: 'notice',
      },
    ]);
    expect(
      await exists(join(world.dataDir, 'avd', 'simlock-busy.avd', 'hardware-qemu.ini.lock')),
    ).toBe(true);
  });

  it('writes the .ini avdmanager writes', () => {
    const config = new Map([['image.sysdir.1', 'system-images/android-35/google_apis/x86_64/']]);
    expect(avdIni('/data/avd/a.avd', config)).toBe(
      'avd.ini.encoding=UTF-8\npath=/data/avd/a.avd\ntarget=android-35\n',
    );
    expect(avdIni('/data/avd/a.avd', new Map([['target', 'android-34']]))).toContain(
      'target=android-34\n',
    );
  });
});
