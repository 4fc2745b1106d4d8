// Test helper: the stand-in `emulator` (-list-avds, booting an AVD on a console port) and an
// emulator's end, which takes its serial off every adb server. Apart from the other stand-in
// tools (android-tools.ts runs each call); the stand-in `adb` ends emulators with killEmulator.
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AndroidState } from './android-state.js';
import { avdHomeOf, fail, option, type StandInTool } from './android-tool-common.ts';

export const emulator: StandInTool = (state, argv, env, io) => {
  const home = avdHomeOf(env);
  const avds = state.homes[home] ?? {};
  if (argv[0] === '-list-avds') {
    // As the real one (android/avd/scanner.c): every <name>.ini in the AVD home, nothing else.
    const names = existsSync(home)
      ? readdirSync(home)
          .filter((entry) => entry.endsWith('.ini'))
          .map((entry) => entry.slice(0, -4))
      : [];
    io.out += names
      .sort()
      .map((name) => `${name}\n`)
      .join('');
    return;
  }
  const name = option(argv, '-avd') ?? '';
  const record = avds[name];
  if (record === undefined) {
    fail(
      io,
      `ERROR         | Unknown AVD name [${name}], use -list-avds to see valid list.\n` +
        `ERROR         | HOME is defined but there is no file ${name}.ini in $HOME/.android/avd\n`,
    );
  }
  const port = Number(option(argv, '-port') ?? '5554');
  if (port % 2 !== 0 || port < 5554 || port > 5682) fail(io, `ERROR | Invalid -port ${port}\n`);
  if (state.emulators[port] !== undefined) fail(io, `ERROR | console port ${port} is in use\n`);
  if (Object.values(state.emulators).some((emu) => emu.avd === name && emu.home === home)) {
    fail(
      io,
      'ERROR         | Running multiple emulators with the same AVD is an experimental feature.\n',
    );
  }
  record.boots += 1;
  if (argv.includes('-wipe-data')) record.wipes += 1;
  const serverPort = Number(env.ANDROID_ADB_SERVER_PORT || '5037');
  state.emulators[port] = {
    avd: name,
    home,
    serverPort,
    bootCompletedAt: state.control.neverBoots?.includes(name)
      ? Number.MAX_SAFE_INTEGER
      : Date.now() + (state.control.bootDelayMs ?? 0),
  };
  writeFileSync(join(home, `${name}.avd`, 'hardware-qemu.ini.lock'), String(process.pid));
  // The emulator tells the server at ANDROID_ADB_SERVER_PORT it started; none listening: lost.
  const server = state.servers[serverPort];
  if (server?.running === true) server.emulators.push(port);
};

/** The emulator on `port` is gone: its process exited, its serial leaves every server. */
export function killEmulator(state: AndroidState, port: number): void {
  const emu = state.emulators[port];
  if (emu === undefined) return;
  rmSync(join(emu.home, `${emu.avd}.avd`, 'hardware-qemu.ini.lock'), { force: true });
  delete state.emulators[port];
  for (const server of Object.values(state.servers)) {
    server.emulators = server.emulators.filter((registered) => registered !== port);
  }
}
