// A hundred AVDs made, booted, wiped and deleted by the agent on a host a person uses: the person's
// AVDs, their running emulator, their adb server and the phone on it come out as they went in.
// The tools run in process (the same stand-in code, state and log as the executables) so that the
// ~2000 calls take seconds; adb-own.test.ts runs the same commands as processes.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeviceToMake } from '../driver.js';
import {
  agentDriver,
  androidWorld,
  AGENT_SERVER_PORT,
  IMAGE_34,
  PERSON_AVD,
  PHONE,
  type AndroidWorld,
} from '../../../test/stand-ins/android-world.js';

const CYCLES = 100;
const ADOPTED = 'CI_Pixel';
const UNTOUCHED = 'Person_Tablet';

let world: AndroidWorld;

beforeEach(async () => {
  world = await androidWorld();
  world.standIns.addAvd(world.standIns.defaultAvdHome, ADOPTED, IMAGE_34, 'pixel_3a_xl');
  world.standIns.addAvd(world.standIns.defaultAvdHome, UNTOUCHED, IMAGE_34, 'pixel_tablet');
});

afterEach(async () => {
  await world.standIns.cleanup();
});

/** What the person sees: their server's devices, their AVDs' records and files. */
async function personView() {
  const person = world.standIns.inProcess();
  const devices = await person.run(['adb', 'devices', '-l']);
  const avds = await person.run(['emulator', '-list-avds']);
  const state = await world.standIns.state();
  const home = world.standIns.defaultAvdHome;
  const files: Record<string, string> = {};
  for (const name of [PERSON_AVD, UNTOUCHED]) {
    files[name] = await readFile(join(home, `${name}.avd`, 'config.ini'), 'utf8');
  }
  return {
    devices: devices.stdout,
    avds: avds.stdout,
    records: {
      [PERSON_AVD]: state.homes[home]?.[PERSON_AVD],
      [UNTOUCHED]: state.homes[home]?.[UNTOUCHED],
    },
    files,
    server: state.servers[5037],
    emulator: state.emulators[5554],
    phones: state.phones,
  };
}

describe('a hundred create/boot/wipe/delete cycles beside a person', { timeout: 300_000 }, () => {
  it('leaves the person’s AVDs, emulator, adb server and phone as they were', async () => {
    const before = await personView();
    expect(before.devices).toContain('emulator-5554');
    expect(before.devices).toContain(PHONE);
    expect(before.avds).toBe(`${ADOPTED}\n${UNTOUCHED}\n${PERSON_AVD}\n`);
    const startCalls = (await world.standIns.calls()).length;

    const driver = agentDriver(world, {
      inProcess: true,
      adb: { serverPort: AGENT_SERVER_PORT, adopt: [ADOPTED] },
    });
    const wants: DeviceToMake[] = [
      { platform: 'android', model: 'Pixel 7', os: '34' },
      { platform: 'android', model: 'Pixel Tablet', os: '35' },
      { platform: 'android', model: 'medium phone', os: '35' },
    ];
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const listing = await driver.listDevices();
      expect(listing.devices.map((device) => device.id)).toEqual([ADOPTED, PHONE]);
      const made = await driver.create(wants[cycle % wants.length]!, `sl-${cycle}`);
      await driver.boot(made);
      await driver.erase(made);
      await driver.delete(made);
      if (cycle % 10 === 0) {
        const adopted = listing.devices.find((device) => device.id === ADOPTED)!;
        await driver.boot(adopted);
        await driver.erase(adopted);
        await expect(driver.delete(adopted)).rejects.toThrow(/never deletes/);
      }
    }

    expect(await personView()).toEqual(before);
    const state = await world.standIns.state();
    expect(state.homes[join(world.dataDir, 'avd')]).toEqual({});
    expect(state.homes[world.standIns.defaultAvdHome]?.[ADOPTED]).toMatchObject({
      boots: CYCLES / 10,
      wipes: CYCLES / 10 - 1,
    });
    expect(state.servers[AGENT_SERVER_PORT]).toMatchObject({ starts: 1, kills: 0, emulators: [] });

    const calls = (await world.standIns.calls()).slice(startCalls);
    expect(calls.filter((call) => call.argv.includes('kill-server'))).toEqual([]);
    // On the default server: only listing and reading the phone.
    const onDefault = calls.filter((call) => call.tool === 'adb' && call.serverPort === 5037);
    for (const call of onDefault) {
      expect(
        call.argv.join(' ') === 'devices -l' ||
          call.argv.join(' ').startsWith(`-s ${PHONE} shell getprop`),
      ).toBe(true);
    }
    // In the default AVD home: listing, and booting the adopted AVD only.
    const inDefaultHome = calls.filter(
      (call) => call.tool !== 'adb' && call.avdHome === world.standIns.defaultAvdHome,
    );
    for (const call of inDefaultHome) {
      expect(call.tool).toBe('emulator');
      expect(call.argv[0] === '-list-avds' || call.argv[1] === ADOPTED).toBe(true);
    }
    expect(inDefaultHome.filter((call) => call.argv[0] === '-avd')).toHaveLength(CYCLES / 10);
    // Every emulator the agent started registered with its own server, above 5585.
    for (const call of calls.filter((c) => c.tool === 'emulator' && c.argv[0] === '-avd')) {
      expect(call.env.ANDROID_ADB_SERVER_PORT).toBe(String(AGENT_SERVER_PORT));
      expect(Number(call.argv[3])).toBeGreaterThanOrEqual(5600);
    }
  });
});
