import { describe, expect, it } from 'vitest';
import { aSimulator } from '../../../test/fixtures/driver-devices.js';
import { readTestdata } from '../../../test/stand-ins/stand-in.js';
import {
  catalogOf,
  makeableEntries,
  makeableModels,
  osAllowed,
  PROVISION_EVERYTHING,
  readSimctlList,
  type ProvisionPolicy,
} from './simctl-list.js';

async function host(file = 'list-devicetypes-runtimes.json') {
  return readSimctlList(await readTestdata(import.meta.url, file));
}

function offer(list: Awaited<ReturnType<typeof host>>, policy: Partial<ProvisionPolicy> = {}) {
  const models = makeableModels(makeableEntries(list, { ...PROVISION_EVERYTHING, ...policy }));
  return Object.fromEntries(models.map((model) => [model.model, model.os]));
}

describe('what a host can make', () => {
  it("is each installed iOS runtime's supported iPhones and iPads, OS versions in order", async () => {
    expect(offer(await host())).toEqual({
      'iPad (10th generation)': ['17.5', '18.4'],
      'iPad Pro 13-inch (M4)': ['17.5', '18.4'],
      'iPhone 15': ['17.5', '18.4'],
      'iPhone 16': ['18.4'],
      'iPhone 16 Pro': ['18.4'],
      'iPhone SE (3rd generation)': ['17.5', '18.4'],
    });
  });

  it('leaves out watches and TVs, and runtimes that are not available (iOS 16.4 here)', async () => {
    const models = makeableModels(makeableEntries(await host(), PROVISION_EVERYTHING));
    expect(models.map((model) => model.model)).not.toContain('Apple Watch Series 10 (46mm)');
    expect(models.flatMap((model) => model.os)).not.toContain('16.4');
    expect(models.find((model) => model.model === 'iPad Pro 13-inch (M4)')).toMatchObject({
      platform: 'ios',
      class: 'tablet',
    });
  });

  it("falls back to the device types' runtime bounds when runtimes list no device types", async () => {
    expect(offer(await host('list-devices-runtimes-devicetypes.json'))).toEqual({
      'iPad Pro 13-inch (M4)': ['17.5', '18.4'],
      'iPhone 15': ['17.5', '18.4'],
      'iPhone 16': ['18.4'],
      'iPhone 16 Pro': ['18.4'],
    });
  });

  it('keeps the identifiers simctl create takes', async () => {
    const entry = makeableEntries(await host(), PROVISION_EVERYTHING).find(
      (candidate) => candidate.model === 'iPhone 16' && candidate.os === '18.4',
    );
    expect(entry).toEqual({
      model: 'iPhone 16',
      class: 'phone',
      os: '18.4',
      deviceTypeIdentifier: 'com.apple.CoreSimulator.SimDeviceType.iPhone-16',
      runtimeIdentifier: 'com.apple.CoreSimulator.SimRuntime.iOS-18-4',
    });
  });
});

describe("the host's provision config", () => {
  it('narrows the models, in any case', async () => {
    expect(offer(await host(), { models: ['iphone 16', 'IPAD PRO 13-INCH (M4)'] })).toEqual({
      'iPad Pro 13-inch (M4)': ['17.5', '18.4'],
      'iPhone 16': ['18.4'],
    });
  });

  it('narrows the OS versions: exact, a major version as a prefix, or a range', async () => {
    const list = await host();
    expect(offer(list, { models: ['iPhone 15'], os: ['17.5'] })).toEqual({ 'iPhone 15': ['17.5'] });
    expect(offer(list, { models: ['iPhone 15'], os: ['18'] })).toEqual({ 'iPhone 15': ['18.4'] });
    expect(offer(list, { models: ['iPhone 15'], os: ['>=17 <18'] })).toEqual({
      'iPhone 15': ['17.5'],
    });
    expect(offer(list, { os: ['16.4'] })).toEqual({});
  });

  it('offers nothing when provisioning is off', async () => {
    expect(makeableEntries(await host(), { enabled: false, models: [], os: [] })).toEqual([]);
  });

  it('matches an OS entry as api/match does, or as a major-version prefix', () => {
    expect(osAllowed('18', '18.4')).toBe(true);
    expect(osAllowed('18.4', '18.4')).toBe(true);
    expect(osAllowed('18.4', '18.4.1')).toBe(true);
    expect(osAllowed('1', '18.4')).toBe(false);
    expect(osAllowed('>=18.2', '18.4')).toBe(true);
    expect(osAllowed('<18', '18.4')).toBe(false);
  });
});

describe('the catalog', () => {
  it("lists the devices' models and the makeable ones, and the installed iOS runtimes", async () => {
    const list = await host();
    const makeable = makeableModels(
      makeableEntries(list, { ...PROVISION_EVERYTHING, models: ['iPhone 16'] }),
    );
    const catalog = catalogOf(
      list,
      [
        aSimulator('5A1C0DE2-8B63-4E0A-9E0C-2F2D7C4B6A11', {
          name: 'iPhone 15',
          model: 'iPhone 15',
          os: '17.5',
        }),
      ],
      makeable,
    );
    expect(catalog).toEqual({
      platforms: ['ios'],
      models: [
        { name: 'iPhone 15', platform: 'ios', class: 'phone' },
        { name: 'iPhone 16', platform: 'ios', class: 'phone' },
      ],
      runtimes: [
        { platform: 'ios', version: '17.5' },
        { platform: 'ios', version: '18.4' },
      ],
    });
  });
});
