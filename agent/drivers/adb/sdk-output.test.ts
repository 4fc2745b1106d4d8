import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readTestdata } from '../../../test/stand-ins/stand-in.js';
import { findSdkRoot } from './avd-maker.js';
import {
  avdmanagerText,
  classifyAvdmanagerFailure,
  classOfProfile,
  imagesByApiLevel,
  parseDeviceProfiles,
  readSystemImages,
} from './sdk-output.js';

const sdkRoot = fileURLToPath(new URL('testdata/sdk', import.meta.url));

describe('device profiles from avdmanager list device', () => {
  it('reads each block: id, display name, maker and the tag of other form factors', async () => {
    const profiles = parseDeviceProfiles(
      await readTestdata(import.meta.url, 'avdmanager-list-device.txt'),
    );
    expect(profiles).toHaveLength(10);
    expect(profiles[0]).toEqual({
      id: 'automotive_1024p_landscape',
      name: 'Automotive (1024p landscape)',
      oem: 'Google',
      tag: 'android-automotive-playstore',
    });
    expect(profiles.find((profile) => profile.id === 'Nexus 7')).toEqual({
      id: 'Nexus 7',
      name: 'Nexus 7 (2012)',
      oem: 'Google',
    });
  });

  it('serves phones and tablets only', async () => {
    const profiles = parseDeviceProfiles(
      await readTestdata(import.meta.url, 'avdmanager-list-device.txt'),
    );
    const classes = Object.fromEntries(profiles.map((p) => [p.name, classOfProfile(p)]));
    expect(classes).toEqual({
      'Automotive (1024p landscape)': undefined,
      'Galaxy Nexus': 'phone',
      'Medium Phone': 'phone',
      'Nexus 7 (2012)': 'tablet',
      'Pixel 3a XL': 'phone',
      'Pixel 7': 'phone',
      'Pixel Tablet': 'tablet',
      'Resizable (Experimental)': 'phone',
      'Television (1080p)': undefined,
      'Wear OS Small Round': undefined,
    });
  });

  it('reads nothing from text that is not a listing', () => {
    expect(parseDeviceProfiles('Error: something\nnull\n')).toEqual([]);
  });
});

describe('installed system images', () => {
  it('finds every image folder of the SDK with its API level, tag and ABI', async () => {
    const images = await readSystemImages(sdkRoot);
    expect(images.map((image) => [image.packagePath, image.apiLevel])).toEqual([
      ['system-images;android-34;android-tv;x86', '34'],
      ['system-images;android-34;google_apis;x86_64', '34'],
      ['system-images;android-34;google_apis_playstore;x86_64', '34'],
      ['system-images;android-34-ext10;google_apis;x86_64', '34'],
      ['system-images;android-35;google_apis;arm64-v8a', '35'],
      ['system-images;android-35;google_apis;x86_64', '35'],
    ]);
  });

  it('picks one phone image per API level the host runs: Google APIs, plain platform, its ABI', async () => {
    const images = await readSystemImages(sdkRoot);
    const x64 = imagesByApiLevel(images, 'x64');
    expect([...x64].map(([api, image]) => [api, image.packagePath])).toEqual([
      ['34', 'system-images;android-34;google_apis;x86_64'],
      ['35', 'system-images;android-35;google_apis;x86_64'],
    ]);
    const arm = imagesByApiLevel(images, 'arm64');
    expect([...arm].map(([api, image]) => [api, image.packagePath])).toEqual([
      ['35', 'system-images;android-35;google_apis;arm64-v8a'],
    ]);
  });

  it('reads no images where the SDK has none', async () => {
    expect(await readSystemImages(fileURLToPath(new URL('testdata/avd', import.meta.url)))).toEqual(
      [],
    );
  });
});

describe("avdmanager's errors", () => {
  it('drops the progress bars and the null line, and tells the failures apart', async () => {
    const badPackage = avdmanagerText(
      await readTestdata(import.meta.url, 'avdmanager-errors/create-bad-package.stdout.txt'),
      await readTestdata(import.meta.url, 'avdmanager-errors/create-bad-package.stderr.txt'),
    );
    expect(badPackage).toBe(
      'Error: Package path is not valid. Valid system image paths are:\nsystem-images;android-34;google_apis;x86_64',
    );
    expect(classifyAvdmanagerFailure(badPackage)).toBe('image-not-installed');
    const kinds: Record<string, string> = {
      'create-unknown-profile': 'unknown-profile',
      'create-disk-full': 'disk-full',
      'delete-unknown': 'unknown-avd',
    };
    for (const [file, kind] of Object.entries(kinds)) {
      const text = await readTestdata(import.meta.url, `avdmanager-errors/${file}.stderr.txt`);
      expect(classifyAvdmanagerFailure(avdmanagerText('', text))).toBe(kind);
    }
  });
});

describe('where the SDK is', () => {
  it('is ANDROID_HOME, else ANDROID_SDK_ROOT, else the SDK around the avdmanager on PATH', async () => {
    const root = await mkdtemp(join(tmpdir(), 'simlock-sdk-'));
    try {
      const bin = join(root, 'cmdline-tools', 'latest', 'bin');
      await mkdir(bin, { recursive: true });
      await writeFile(join(bin, 'avdmanager'), '');
      expect(await findSdkRoot({ ANDROID_HOME: '/a', ANDROID_SDK_ROOT: '/b' })).toBe('/a');
      expect(await findSdkRoot({ ANDROID_SDK_ROOT: '/b' })).toBe('/b');
      expect(await findSdkRoot({ PATH: `${join(root, 'nothing')}:${bin}` })).toBe(root);
      expect(await findSdkRoot({ PATH: join(root, 'nothing') })).toBeUndefined();
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
