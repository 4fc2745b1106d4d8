// Test helper: the stand-in `avdmanager` (list device, create avd, delete avd) and the AVD files it
// writes, in the real tool's formats and error texts (sources in adb/testdata/README.md). Apart
// from the other stand-in tools (android-tools.ts runs each call); android-stand-ins.ts also
// writes AVD files with writeAvdFiles for a person's AVDs.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AvdRecord, Profile } from './android-state.js';
import { avdHomeOf, fail, imageParts, option, type StandInTool } from './android-tool-common.ts';

/** The files avdmanager writes: <name>.ini (where the AVD is) and <name>.avd/config.ini. */
export function writeAvdFiles(home: string, name: string, record: AvdRecord, profile: Profile) {
  const { platform, tag, abi } = imageParts(record.image);
  const dir = join(home, `${name}.avd`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(home, `${name}.ini`),
    `avd.ini.encoding=UTF-8\npath=${dir}\ntarget=${platform}\n`,
  );
  const config: Record<string, string> = {
    PlayStore: 'false',
    'abi.type': abi,
    'disk.dataPartition.size': '6442450944',
    'hw.cpu.arch': abi === 'arm64-v8a' ? 'arm64' : abi,
    'hw.device.manufacturer': profile.oem,
    'hw.device.name': profile.id,
    'hw.ramSize': '2048',
    'image.sysdir.1': `system-images/${platform}/${tag}/${abi}/`,
    'tag.display': tag === 'google_apis' ? 'Google APIs' : tag,
    'tag.id': tag,
    target: platform,
  };
  const text = Object.entries(config)
    .map(([key, value]) => `${key}=${value}\n`)
    .join('');
  writeFileSync(join(dir, 'config.ini'), text.replace('PlayStore=', 'PlayStore.enabled='));
}

function removeAvdFiles(home: string, name: string): void {
  rmSync(join(home, `${name}.ini`), { force: true });
  rmSync(join(home, `${name}.avd`), { recursive: true, force: true });
}

const PROGRESS = '[=======================================] 100% Loading local repository...\n';

export const avdmanager: StandInTool = (state, argv, env, io) => {
  const home = avdHomeOf(env);
  const avds = (state.homes[home] ??= {});
  const [verb, object] = argv;
  // AvdManagerCli's errorAndExit: "Error: <message>", then main() prints the exception's message,
  // which is null.
  const error: (message: string) => never = (message) => fail(io, `Error: ${message}\nnull\n`);
  if (verb === 'list' && object === 'device') {
    if (argv.includes('-c')) {
      io.out += state.profiles.map((profile) => `${profile.id}\n`).join('');
      return;
    }
    io.out += 'Available devices definitions:\n';
    state.profiles.forEach((profile, index) => {
      if (index > 0) io.out += '---------\n';
      io.out += `id: ${index} or "${profile.id}"\n    Name: ${profile.name}\n    OEM : ${profile.oem}\n`;
      if (profile.tag !== undefined) io.out += `    Tag : ${profile.tag}\n`;
    });
    return;
  }
  if (verb === 'create' && object === 'avd') {
    const name = option(argv, '-n') ?? '';
    const image = option(argv, '-k');
    const deviceId = option(argv, '-d');
    io.out += PROGRESS;
    const valid = [...state.images].sort().join('\n');
    if (image === undefined)
      error(`Package path (-k) not specified. Valid system image paths are:\n${valid}`);
    if (!state.images.includes(image))
      error(`Package path is not valid. Valid system image paths are:\n${valid}`);
    if (!/^[a-zA-Z0-9._-]+$/.test(name)) {
      error(
        `AVD name '${name}' contains invalid characters.\nAllowed characters are: a-z A-Z 0-9 . _ -`,
      );
    }
    if (avds[name] !== undefined && !argv.includes('--force')) {
      error(
        `Android Virtual Device '${name}' already exists.\nUse --force if you want to replace it.`,
      );
    }
    io.out += `Auto-selecting single ABI ${imageParts(image).abi}\n`;
    let profile = state.profiles.find((candidate) => candidate.id === deviceId);
    if (deviceId !== undefined && profile === undefined) {
      error(`No device found matching --device ${deviceId}.`);
    }
    if (profile === undefined) {
      // No -d: the CLI asks, reading one line of stdin (a pipe left open would hang it here).
      io.out += 'Do you wish to create a custom hardware profile? [no] ';
      const reply = io.readLine().trim() || 'no';
      if (!['no', 'n'].includes(reply.toLowerCase())) error(`${reply} is not a valid reply`);
      profile = { id: 'generic', name: 'Generic', oem: 'Generic' };
    }
    if (state.control.failNextCreate === 'disk-full') {
      delete state.control.failNextCreate;
      error('An error occurred while creating AVD: No space left on device');
    }
    const record: AvdRecord = { image, profile: profile.id, boots: 0, wipes: 0 };
    writeAvdFiles(home, name, record, profile);
    avds[name] = record;
    return;
  }
  if (verb === 'delete' && object === 'avd') {
    const name = option(argv, '-n') ?? '';
    if (avds[name] === undefined) error(`There is no Android Virtual Device named '${name}'.`);
    removeAvdFiles(home, name);
    delete avds[name];
    io.out += `\nAVD '${name}' deleted.\n`;
    return;
  }
  fail(io, `Error: stand-in avdmanager does not know ${argv.join(' ')}\n`);
};
