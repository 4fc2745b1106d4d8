// What the simctl driver may touch: only its own device set, or in default-recorded mode only the
// UDIDs it recorded creating, plus simulators adopted by config. A person's simulators in the
// default set are never listed, booted, shut down, erased or deleted.
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aSimulator } from '../../../test/fixtures/driver-devices.js';
import type { DriverDevice } from '../driver.js';
import { DEFAULT_SET, type StandInSimulator } from '../../../test/stand-ins/simctl-stand-in.js';
import { simctlPerTest } from '../../../test/stand-ins/simctl-per-test.js';

const PERSON_BOOTED = '3B1F7E2A-6C4D-4E8F-9A0B-1C2D3E4F5A6B';
const PERSON_IPAD = '9C8B7A6D-5E4F-4A3B-8C2D-1E0F9A8B7C6D';
const ADOPTED = '4D5E6F70-8192-4A3B-9C4D-5E6F7A8B9C0D';
const IPHONE_16 = 'com.apple.CoreSimulator.SimDeviceType.iPhone-16';
const IOS_18_4 = 'com.apple.CoreSimulator.SimRuntime.iOS-18-4';
const SET_WIDE = ['all', 'booted', 'unavailable'];

const person = (udid: string): DriverDevice => aSimulator(udid, { power: 'booted' });

// Every driver call is a real process; the twenty cycles below are 120 of them. The hundred leases
// of the issue run through a whole agent in e2e/owned-devices.test.ts.
describe(
  'the simlock simctl driver and the simulators it did not make',
  { timeout: 120_000 },
  () => {
    const world = simctlPerTest([
      { udid: PERSON_BOOTED, name: 'iPhone 16', state: 'Booted', boots: 1 },
      {
        udid: PERSON_IPAD,
        name: "Ana's iPad",
        deviceTypeIdentifier: 'com.apple.CoreSimulator.SimDeviceType.iPad-Pro-13-inch-M4-8GB',
      },
      {
        udid: ADOPTED,
        name: 'CI iPhone 15',
        deviceTypeIdentifier: 'com.apple.CoreSimulator.SimDeviceType.iPhone-15',
        runtime: 'com.apple.CoreSimulator.SimRuntime.iOS-17-5',
      },
    ]);
    const driver: typeof world.driver = (options) => world.driver(options);

    /** The person's simulators are as they were, and no argv named one or a whole set. */
    async function expectPersonsUntouched(before: StandInSimulator[]): Promise<void> {
      const persons = (devices: StandInSimulator[]) =>
        devices.filter((device) => [PERSON_BOOTED, PERSON_IPAD].includes(device.udid));
      expect(persons(await world.standIn.devices())).toEqual(persons(before));
      expect(persons(before)).toHaveLength(2);
      const touching = (await world.standIn.calls()).filter((argv) =>
        argv.some((arg) => arg === PERSON_BOOTED || arg === PERSON_IPAD || SET_WIDE.includes(arg)),
      );
      expect(touching).toEqual([]);
    }

    it('in its own set: twenty create, boot, erase, delete cycles and a restart leave the default set as it was', async () => {
      const before = await world.standIn.devices();
      const listed = new Set<string>();
      let current = driver();
      // Four lanes at once, as leases overlap; the agent restarts (a new driver) halfway.
      const lane = async (lane: number, from: number, to: number) => {
        for (let cycle = from; cycle < to; cycle++) {
          for (const device of (await current.listDevices()).devices) listed.add(device.id);
          const made = await current.create(
            {
              platform: 'ios',
              model: lane % 2 === 0 ? 'iPhone 16' : 'iPad Pro 13-inch (M4)',
              os: '18.4',
            },
            `simlock lane ${lane} cycle ${cycle}`,
          );
          await current.boot(made);
          await current.erase(made);
          await current.delete(made);
        }
      };
      await Promise.all([0, 1, 2, 3].map((n) => lane(n, 0, 3)));
      current = driver();
      await Promise.all([0, 1, 2, 3].map((n) => lane(n, 3, 5)));

      expect(await world.standIn.devices()).toEqual(before);
      await expectPersonsUntouched(before);
      expect(
        [...listed].filter((id) => [PERSON_BOOTED, PERSON_IPAD, ADOPTED].includes(id)),
      ).toEqual([]);
      const calls = await world.standIn.calls();
      expect(calls).toHaveLength(120);
      expect(
        calls.filter((argv) => argv.slice(0, 3).join(' ') !== `simctl --set ${world.setDir}`),
      ).toEqual([]);
      expect(calls.filter((argv) => argv[3] === 'create')).toHaveLength(20);
      expect(calls.filter((argv) => argv[3] === 'delete')).toHaveLength(20);
      expect(await world.standIn.devices(world.setDir)).toEqual([]);
      expect(await world.standIn.sets()).toEqual([DEFAULT_SET, world.setDir]);
    });

    it('in the default set, recorded: makes simlock-named simulators, records them at once, and serves only those', async () => {
      const before = await world.standIn.devices();
      const recorded = driver({ deviceSet: 'default-recorded' });
      expect((await recorded.listDevices()).devices).toEqual([]);
      const made = await recorded.create(
        { platform: 'ios', model: 'iPhone 16', os: '18.4' },
        'a1b2c3',
      );
      expect(made).toMatchObject({ name: 'simlock iPhone 16 a1b2c3', power: 'shutdown' });
      const record = JSON.parse(
        await readFile(join(world.dataDir, 'simctl-created.json'), 'utf8'),
      ) as {
        created: Array<{ udid: string; name: string }>;
      };
      expect(record.created).toMatchObject([{ udid: made.id, name: 'simlock iPhone 16 a1b2c3' }]);
      expect(await readdir(world.dataDir)).toEqual(['simctl-created.json']);

      expect((await recorded.listDevices()).devices).toEqual([made]);
      await recorded.boot(made);
      await recorded.erase(made);
      expect(recorded.execArgv('simctl', ['launch', 'com.example.app'], made)).toEqual({
        ok: true,
        argv: ['xcrun', 'simctl', 'launch', made.id, 'com.example.app'],
      });
      expect((await world.standIn.calls()).slice(1)).toEqual([
        ['simctl', 'create', 'simlock iPhone 16 a1b2c3', IPHONE_16, IOS_18_4],
        ['simctl', 'list', '-j', 'devices', 'runtimes', 'devicetypes'],
        ['simctl', 'bootstatus', made.id, '-b'],
        ['simctl', 'shutdown', made.id],
        ['simctl', 'erase', made.id],
      ]);

      for (const action of ['boot', 'shutdown', 'erase', 'delete'] as const) {
        await expect(recorded[action](person(PERSON_BOOTED))).rejects.toThrow(
          /the agent did not create it .*simctl-created\.json.* and it is not adopted/,
        );
      }
      expect(recorded.execArgv('simctl', ['launch', 'x'], person(PERSON_BOOTED))).toMatchObject({
        ok: false,
        code: 'UNAVAILABLE',
      });
      expect((await world.standIn.devices()).filter((device) => device.udid !== made.id)).toEqual(
        before,
      );
      await expectPersonsUntouched(before);
    });

    it('in the default set, recorded: the record outlives the agent, and a vanished simulator is just not listed', async () => {
      const first = driver({ deviceSet: 'default-recorded' });
      const kept = await first.create({ platform: 'ios', model: 'iPhone 15', os: '17.5' }, 'k1');
      const lost = await first.create({ platform: 'ios', model: 'iPhone 16', os: '18.4' }, 'l2');
      await world.standIn.removeDevice(undefined, lost.id); // a person deleted it in Xcode

      const restarted = driver({ deviceSet: 'default-recorded' });
      expect((await restarted.listDevices()).devices).toEqual([kept]);
      await restarted.boot(kept);
      await restarted.delete(kept);
      expect((await world.standIn.devices()).map((device) => device.udid).sort()).toEqual(
        [ADOPTED, PERSON_BOOTED, PERSON_IPAD].sort(),
      );
      const record = JSON.parse(
        await readFile(join(world.dataDir, 'simctl-created.json'), 'utf8'),
      ) as {
        created: Array<{ udid: string }>;
      };
      expect(record.created.map((entry) => entry.udid)).toEqual([lost.id]);
    });

    it('in the default set, recorded: a simulator it cannot record is deleted again at once', async () => {
      const recorded = driver({ deviceSet: 'default-recorded' });
      await recorded.listDevices();
      await rm(world.dataDir, { recursive: true });
      await writeFile(world.dataDir, 'not a folder');
      await expect(
        recorded.create({ platform: 'ios', model: 'iPhone 16', os: '18.4' }, 'x'),
      ).rejects.toThrow(/simctl made ([0-9A-F-]{36}) but could not record it, so deleted it again/);
      const [create, undo] = (await world.standIn.calls()).slice(1);
      expect(create?.[1]).toBe('create');
      expect(undo).toEqual([
        'simctl',
        'delete',
        expect.stringMatching(/^[0-9A-F-]{36}$/) as string,
      ]);
      expect((await world.standIn.devices()).map((device) => device.udid).sort()).toEqual(
        [ADOPTED, PERSON_BOOTED, PERSON_IPAD].sort(),
      );
    });

    it('adopted simulators: listed from the default set, driven there, never deleted', async () => {
      const before = await world.standIn.devices();
      const adopting = driver({ adopt: [ADOPTED.toLowerCase()] });
      const own = await adopting.create({ platform: 'ios', model: 'iPhone 16', os: '18.4' }, 'own');
      const listing = await adopting.listDevices();
      expect(listing.devices.map((device) => device.id).sort()).toEqual([ADOPTED, own.id].sort());
      const adopted = listing.devices.find((device) => device.id === ADOPTED)!;
      expect(adopted).toMatchObject({ model: 'iPhone 15', os: '17.5', power: 'shutdown' });

      await world.standIn.clearCalls();
      await adopting.boot(adopted);
      await adopting.erase(adopted);
      await expect(adopting.delete(adopted)).rejects.toThrow(/will not delete .* adopted/);
      expect(adopting.execArgv('simctl', ['openurl', 'https://example.com'], adopted)).toEqual({
        ok: true,
        argv: ['xcrun', 'simctl', 'openurl', ADOPTED, 'https://example.com'],
      });
      expect(await world.standIn.calls()).toEqual([
        ['simctl', 'bootstatus', ADOPTED, '-b'],
        ['simctl', 'shutdown', ADOPTED],
        ['simctl', 'erase', ADOPTED],
      ]);
      expect(
        (await world.standIn.devices()).find((device) => device.udid === ADOPTED),
      ).toMatchObject({
        state: 'Shutdown',
        boots: 1,
        erased: 1,
      });
      await expectPersonsUntouched(before);
    });

    it('adopted simulators are served in default-recorded mode too, listed in the same one call', async () => {
      const recorded = driver({ deviceSet: 'default-recorded', adopt: [ADOPTED] });
      expect((await recorded.listDevices()).devices.map((device) => device.id)).toEqual([ADOPTED]);
      expect(await world.standIn.calls()).toEqual([
        ['simctl', 'list', '-j', 'devices', 'runtimes', 'devicetypes'],
      ]);
    });

    it('lists the default set for adopted simulators only when there are some, without --set', async () => {
      await driver().listDevices();
      await driver({ adopt: [ADOPTED] }).listDevices();
      expect(await world.standIn.calls()).toEqual([
        ['simctl', '--set', world.setDir, 'list', '-j', 'devices', 'runtimes', 'devicetypes'],
        ['simctl', '--set', world.setDir, 'list', '-j', 'devices', 'runtimes', 'devicetypes'],
        ['simctl', 'list', '-j', 'devices'],
      ]);
    });
  },
);
