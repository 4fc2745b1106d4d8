// What adb and the emulator print, parsed and bounded: `adb devices -l`, AVD config.ini files and
// `emulator -list-avds`; and which adb commands a lease holder may run. Pure; the driver in adb.ts
// runs the commands.
import { z } from 'zod';
import type { Catalog, DeviceClass, Presence } from '../../../api/index.js';
import {
  checkExecArgs,
  DriverError,
  refuseTool,
  type ExecPlan,
  type MakeableModel,
} from '../driver.js';

// --- `adb devices -l` ------------------------------------------------------------------------

export const AdbState = z.enum([
  'device',
  'offline',
  'unauthorized',
  'authorizing',
  'no-permissions',
  'other',
]);
export type AdbState = z.infer<typeof AdbState>;

export const AdbEntry = z.object({
  serial: z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/),
  state: AdbState,
  properties: z.record(z.string().max(64), z.string().max(256)),
});
export type AdbEntry = z.infer<typeof AdbEntry>;

const MAX_ADB_ENTRIES = 512;

function stateOf(word: string, line: string): AdbState {
  if (line.includes('no permissions')) return 'no-permissions';
  const parsed = AdbState.safeParse(word);
  return parsed.success ? parsed.data : 'other';
}

/** The entries of `adb devices -l`: serial, state, and the key:value properties after them. */
export function parseAdbDevices(text: string): AdbEntry[] {
  const entries: AdbEntry[] = [];
  for (const line of text.split(/\r?\n/)) {
    // The header, blank lines, and the server's "* daemon started" chatter.
    if (line.trim() === '' || line.startsWith('List of devices') || line.startsWith('*')) continue;
    const [serial, word, ...rest] = line.trim().split(/\s+/);
    if (serial === undefined || word === undefined) continue;
    const properties: Record<string, string> = {};
    for (const token of rest) {
      const colon = token.indexOf(':');
      if (colon > 0) properties[token.slice(0, colon)] = token.slice(colon + 1);
    }
    entries.push(AdbEntry.parse({ serial, state: stateOf(word, line), properties }));
    if (entries.length > MAX_ADB_ENTRIES) throw new DriverError('adb lists too many devices');
  }
  return entries;
}

export function isEmulatorSerial(serial: string): boolean {
  return /^emulator-\d+$/.test(serial);
}

/** Presence of a phone from its adb state: device → present, unauthorized → untrusted. */
export function presenceFromAdbState(state: AdbState | undefined): Presence {
  if (state === 'device') return { present: true };
  if (state === 'unauthorized' || state === 'authorizing') {
    return { present: false, reason: 'untrusted' };
  }
  return { present: false, reason: 'not-present' };
}

// --- AVDs -------------------------------------------------------------------------------------

export interface AvdDescription {
  name: string;
  displayName: string;
  model: string;
  class: DeviceClass;
  apiLevel: string;
}

export function parseIni(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.slice(0, 64 * 1024).split(/\r?\n/)) {
    const equals = line.indexOf('=');
    if (equals > 0) values.set(line.slice(0, equals).trim(), line.slice(equals + 1).trim());
  }
  return values;
}

/** "pixel_7_pro" → "Pixel 7 Pro"; a name already written for people ("Nexus 5X") is kept. */
export function modelFromHardwareName(name: string): string {
  if (/[A-Z ]/.test(name)) return name;
  return name
    .split('_')
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

const TABLET_HARDWARE = /tablet|pixel[ _]c\b|nexus[ _](7|9|10)\b/i;

/**
 * An AVD's model, class and API level from its config.ini. The model is the display name of its
 * device profile `hw.device.name` when avdmanager listed it (`profileNames`: "pixel_3a_xl" →
 * "Pixel 3a XL"), else that id written for people; the class is tablet when the profile says
 * tablet (pixel_tablet, pixel_c, Nexus 7/9/10), else phone; the API level comes from the system
 * image (`image.sysdir.1=system-images/android-34/…`).
 */
export function describeAvd(
  name: string,
  configIni: string,
  profileNames: ReadonlyMap<string, string> = new Map(),
): AvdDescription | undefined {
  const config = parseIni(configIni);
  const apiLevel = /android-(\d{1,3})\b/.exec(config.get('image.sysdir.1') ?? '')?.[1];
  if (apiLevel === undefined) return undefined;
  const hardware = config.get('hw.device.name') ?? name;
  const model = profileNames.get(hardware) ?? modelFromHardwareName(hardware);
  const tablet = TABLET_HARDWARE.test(hardware) || TABLET_HARDWARE.test(model);
  return {
    name,
    displayName: config.get('avd.ini.displayname') ?? name,
    model: model.slice(0, 128),
    class: tablet ? 'tablet' : 'phone',
    apiLevel,
  };
}

/**
 * The catalog: the models of the AVDs and of what can be made, and the API levels of both (what
 * a request may name and be served on this host).
 */
export function catalogOf(
  avds: readonly Pick<AvdDescription, 'model' | 'class' | 'apiLevel'>[],
  makeable: readonly MakeableModel[],
): Catalog {
  const models = new Map<string, Catalog['models'][number]>();
  const runtimes = new Set<string>();
  for (const avd of avds) {
    models.set(avd.model, { name: avd.model, platform: 'android', class: avd.class });
    runtimes.add(avd.apiLevel);
  }
  for (const offer of makeable) {
    if (!models.has(offer.model)) {
      models.set(offer.model, { name: offer.model, platform: 'android', class: offer.class });
    }
    for (const os of offer.os) runtimes.add(os);
  }
  return {
    platforms: ['android'],
    models: [...models.values()].slice(0, 256),
    runtimes: [...runtimes]
      .sort((a, b) => Number(a) - Number(b))
      .slice(0, 256)
      .map((version) => ({ platform: 'android' as const, version })),
  };
}

export function parseAvdList(text: string): string[] {
  // Newer emulators print INFO lines around the names.
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => /^[A-Za-z0-9._-]{1,128}$/.test(line))
    .slice(0, 512);
}

// --- exec -------------------------------------------------------------------------------------

/** adb commands about the server or other devices; a lease holder gets the one device only. */
export const ADB_HOST_COMMANDS = [
  'devices',
  'connect',
  'disconnect',
  'pair',
  'reconnect',
  'kill-server',
  'start-server',
  'mdns',
  'host-features',
] as const;

/**
 * The argv that runs a holder's adb command on the leased device: `-s <serial>`, and `-P <port>`
 * for an emulator on the agent's own adb server.
 */
export function adbExecArgv(
  args: readonly string[],
  serial: string,
  serverPort?: number,
): ExecPlan {
  const refusal = checkExecArgs(args);
  if (refusal) return refusal;
  const [command] = args;
  if (command === undefined) return refuseTool('adb needs a command, e.g. shell');
  // adb's global options (-s, -t, -d, -e, -H, -P) come before the command: none may retarget it.
  if (command.startsWith('-')) {
    return refuseTool(`adb options such as ${command} are not allowed; the agent adds -s and -P`);
  }
  if ((ADB_HOST_COMMANDS as readonly string[]).includes(command)) {
    return refuseTool(`adb ${command} reaches beyond the leased device`);
  }
  const server = serverPort === undefined ? [] : ['-P', String(serverPort)];
  return { ok: true, argv: ['adb', ...server, '-s', serial, ...args] };
}
