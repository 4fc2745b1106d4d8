// What the Android SDK says about what the host can make, parsed and bounded: the device profiles
// of `avdmanager list device`, the system images installed under the SDK
// (system-images/android-<api>/<tag>/<abi>/), which of them the host runs, and what avdmanager's
// errors mean. Pure, except `readSystemImages`, which reads the SDK folder.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DeviceClass } from '../../../api/index.js';
import { parseIni } from './adb-output.js';

// --- `avdmanager list device` -----------------------------------------------------------------

/** A hardware profile avdmanager can make an AVD of: `-d <id>`; `name` is what people see. */
export interface DeviceProfile {
  id: string;
  name: string;
  oem: string;
  /** Only form factors other than phones and tablets have one (android-tv, android-wear, …). */
  tag?: string;
}

const MAX_PROFILES = 1000;

/**
 * The blocks of `avdmanager list device`: `id: <n> or "<id>"`, then indented `Name:`, `OEM :` and
 * an optional `Tag :`, blocks separated by `---------` (AvdManagerCli.displayDeviceList).
 */
export function parseDeviceProfiles(text: string): DeviceProfile[] {
  const profiles: DeviceProfile[] = [];
  let current: DeviceProfile | undefined;
  for (const line of text.slice(0, 1024 * 1024).split(/\r?\n/)) {
    const id = /^id:\s*\d+\s+or\s+"([^"]{1,128})"\s*$/.exec(line)?.[1];
    if (id !== undefined) {
      current = { id, name: id, oem: '' };
      profiles.push(current);
      if (profiles.length > MAX_PROFILES) break;
      continue;
    }
    const field = /^\s+(Name|OEM|Tag)\s*:\s?(.*)$/.exec(line);
    if (field === null || current === undefined) continue;
    const value = (field[2] ?? '').trim().slice(0, 128);
    if (field[1] === 'Name' && value !== '') current.name = value;
    else if (field[1] === 'OEM') current.oem = value;
    else if (field[1] === 'Tag' && value !== '') current.tag = value;
  }
  return profiles;
}

const TABLET_NAME = /tablet|\bpixel c\b|\bpixel_c\b|\bnexus[ _](7|9|10)\b/i;

/** Phone or tablet; undefined for a TV, watch, car, desktop or headset profile (it has a tag). */
export function classOfProfile(profile: DeviceProfile): DeviceClass | undefined {
  if (profile.tag !== undefined) return undefined;
  return TABLET_NAME.test(profile.name) || TABLET_NAME.test(profile.id) ? 'tablet' : 'phone';
}

// --- installed system images ------------------------------------------------------------------

/** One installed image: `system-images;<platform>;<tag>;<abi>` is its avdmanager `-k` path. */
export interface SystemImage {
  packagePath: string;
  apiLevel: string;
  /** The platform folder: android-34, android-34-ext10, android-Baklava. */
  platform: string;
  tag: string;
  abi: string;
}

const SEGMENT = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_IMAGES = 500;

async function folders(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory() && SEGMENT.test(entry.name))
    .map((entry) => entry.name)
    .sort();
}

/**
 * The system images installed under `sdkRoot`: every system-images/<platform>/<tag>/<abi>/ that
 * holds the package.xml sdkmanager writes or the source.properties the image ships with. The API
 * level is source.properties' AndroidVersion.ApiLevel, else the number in the platform folder.
 */
export async function readSystemImages(sdkRoot: string): Promise<SystemImage[]> {
  const images: SystemImage[] = [];
  const root = join(sdkRoot, 'system-images');
  for (const platform of await folders(root)) {
    for (const tag of await folders(join(root, platform))) {
      for (const abi of await folders(join(root, platform, tag))) {
        const dir = join(root, platform, tag, abi);
        const properties = await readFile(join(dir, 'source.properties'), 'utf8').catch(
          () => undefined,
        );
        const packageXml = await readFile(join(dir, 'package.xml'), 'utf8').catch(() => undefined);
        if (properties === undefined && packageXml === undefined) continue;
        const fromProperties = parseIni(properties ?? '').get('AndroidVersion.ApiLevel');
        const apiLevel = /^\d{1,3}$/.test(fromProperties ?? '')
          ? fromProperties!
          : /^android-(\d{1,3})(-ext\d+)?$/.exec(platform)?.[1];
        if (apiLevel === undefined) continue;
        images.push({
          packagePath: `system-images;${platform};${tag};${abi}`,
          apiLevel,
          platform,
          tag,
          abi,
        });
        if (images.length >= MAX_IMAGES) return images;
      }
    }
  }
  return images;
}

/** Image tags of other form factors: no phone or tablet is made with them. */
const OTHER_FORM_TAG = /tv|wear|automotive|desktop|xr|chromeos|glass/i;
/** Which tag is taken when an API level has several: Google APIs first, Play Store next. */
const TAG_PREFERENCE = [
  'google_apis',
  'google_apis_playstore',
  'default',
  'google_atd',
  'aosp_atd',
];

/** ABIs the emulator runs on this host's CPU (x86 images on x64 hosts, arm64 on arm64 hosts). */
export function runnableAbis(arch: string): string[] {
  if (arch === 'x64') return ['x86_64', 'x86'];
  if (arch === 'arm64') return ['arm64-v8a'];
  return [];
}

function rank(image: SystemImage, abis: string[]): number[] {
  const tag = TAG_PREFERENCE.indexOf(image.tag);
  return [
    /-ext\d+$/.test(image.platform) ? 1 : 0,
    tag === -1 ? TAG_PREFERENCE.length : tag,
    abis.indexOf(image.abi),
  ];
}

/**
 * The images a phone or tablet can be made with on this host, one per API level: the preferred tag
 * and ABI among those installed (plain platform folders before SDK-extension ones).
 */
export function imagesByApiLevel(images: SystemImage[], arch: string): Map<string, SystemImage> {
  const abis = runnableAbis(arch);
  const chosen = new Map<string, SystemImage>();
  for (const image of images) {
    if (!abis.includes(image.abi) || OTHER_FORM_TAG.test(image.tag)) continue;
    const current = chosen.get(image.apiLevel);
    if (current === undefined) {
      chosen.set(image.apiLevel, image);
      continue;
    }
    const [a, b] = [rank(image, abis), rank(current, abis)];
    const better = a.findIndex((value, index) => value !== b[index]);
    if (better !== -1 && a[better]! < b[better]!) chosen.set(image.apiLevel, image);
  }
  return chosen;
}

// --- avdmanager's errors ----------------------------------------------------------------------

export type AvdmanagerFailure =
  'unknown-profile' | 'image-not-installed' | 'disk-full' | 'exists' | 'unknown-avd' | 'other';

/**
 * What avdmanager printed, without its noise: progress bars (`[====] 100% Loading local
 * repository...`) and the bare `null` line its main() prints after every `Error:` (it prints the
 * message of the exception it threw to exit, which has none).
 */
export function avdmanagerText(stdout: string, stderr: string): string {
  return `${stderr}\n${stdout}`
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== 'null' && !/^\[=*\s*\]\s*\d+%/.test(line))
    .join('\n')
    .slice(0, 1000);
}

/** The kind of failure avdmanager reported (texts from AvdManagerCli and AvdManager). */
export function classifyAvdmanagerFailure(text: string): AvdmanagerFailure {
  if (/No device found matching --device/i.test(text)) return 'unknown-profile';
  if (
    /Package path is not valid|contains no system images|Package path \(-k\) not specified/i.test(
      text,
    )
  ) {
    return 'image-not-installed';
  }
  if (/No space left on device|not enough (disk )?space|disk full/i.test(text)) return 'disk-full';
  if (/already exists/i.test(text)) return 'exists';
  if (/There is no Android Virtual Device named/i.test(text)) return 'unknown-avd';
  return 'other';
}
