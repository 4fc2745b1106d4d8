// Test helper: the stand-in `adb`: servers by port (started on demand, each finding emulators as
// the real one does), `devices`, `emu`, `shell getprop`, packages of phones. Apart from the other
// stand-in tools (android-tools.ts runs each call).
import type { AndroidState, ServerRecord } from './android-state.js';
import { killEmulator } from './android-emulator.ts';
import { fail, imageParts, option, type StandInTool } from './android-tool-common.ts';

function startServer(state: AndroidState, port: number, env: NodeJS.ProcessEnv): ServerRecord {
  const server = (state.servers[port] ??= {
    running: false,
    starts: 0,
    kills: 0,
    scansEmulators: true,
    usb: true,
    mdns: true,
    emulators: [],
  });
  if (server.running) return server;
  Object.assign(server, {
    running: true,
    starts: server.starts + 1,
    scansEmulators: env.ADB_EMU !== '0',
    usb: env.ADB_USB !== '0',
    mdns: env.ADB_MDNS !== '0',
    // At start a server finds the emulators on 5554–5584 (adb ports up to 5585) unless ADB_EMU=0.
    emulators:
      env.ADB_EMU === '0'
        ? []
        : Object.keys(state.emulators)
            .map(Number)
            .filter((console) => console >= 5554 && console <= 5584),
  });
  return server;
}

export const adb: StandInTool = (state, argv, env, io) => {
  const port = Number(option(argv, '-P') ?? (env.ANDROID_ADB_SERVER_PORT || '5037'));
  const serial = option(argv, '-s') ?? env.ANDROID_SERIAL;
  const rest = argv.filter((_, index) => {
    const before = argv[index - 1];
    return !['-P', '-s'].includes(argv[index]!) && before !== '-P' && before !== '-s';
  });
  const [command, ...args] = rest;
  if (command === 'version') {
    io.out += 'Android Debug Bridge version 1.0.41\nVersion 35.0.2-12147458\n';
    return;
  }
  if (command === 'kill-server') {
    const server = state.servers[port];
    if (server?.running === true) {
      server.running = false;
      server.kills += 1;
      server.emulators = [];
    }
    return;
  }
  let server = state.servers[port];
  if (server?.running !== true) {
    io.err += `* daemon not running; starting now at tcp:${port}\n* daemon started successfully\n`;
    server = startServer(state, port, env);
  }
  if (command === 'start-server') return;
  const live = server;
  const phones = live.usb ? state.phones : [];
  if (command === 'devices') {
    io.out += 'List of devices attached\n';
    let transport = 1;
    for (const console of live.emulators) {
      io.out += `emulator-${console}          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64x transport_id:${transport++}\n`;
    }
    for (const phone of phones) {
      const details =
        phone.state === 'device'
          ? ` product:${phone.model.toLowerCase()} model:${phone.model.replace(/ /g, '_')} device:${phone.model.toLowerCase()}`
          : '';
      io.out += `${phone.serial}         ${phone.state} usb:1-${transport}${details} transport_id:${transport++}\n`;
    }
    io.out += '\n';
    return;
  }
  const notFound = () => fail(io, `adb: device '${serial ?? ''}' not found\n`);
  const consolePort = Number(/^emulator-(\d+)$/.exec(serial ?? '')?.[1] ?? NaN);
  const emu = live.emulators.includes(consolePort) ? state.emulators[consolePort] : undefined;
  const phone = phones.find((candidate) => candidate.serial === serial);
  if (emu === undefined && phone === undefined) notFound();
  if (phone !== undefined && phone.state !== 'device') {
    fail(io, `adb: device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n`);
  }
  if (command === 'emu') {
    if (emu === undefined) fail(io, 'error: emu command only works on an emulator\n');
    if (args[0] === 'avd' && args[1] === 'name') io.out += `${emu.avd}\r\nOK\r\n`;
    else if (args[0] === 'kill') {
      killEmulator(state, consolePort);
      io.out += 'OK: killing emulator, bye bye\r\nOK\r\n';
    } else io.out += 'KO: unknown command\r\n';
    return;
  }
  if (command === 'shell' && args[0] === 'getprop') {
    const api = emu ? imageParts(state.homes[emu.home]![emu.avd]!.image).api : phone!.sdk;
    const props: Record<string, string> = {
      'sys.boot_completed': emu === undefined || Date.now() >= emu.bootCompletedAt ? '1' : '',
      'ro.build.version.sdk': api,
      'ro.product.model': emu ? 'sdk_gphone64_x86_64' : phone!.model,
      'ro.build.characteristics': emu ? 'emulator' : 'nosdcard',
    };
    io.out += `${props[args[1] ?? ''] ?? ''}\n`;
    return;
  }
  if (command === 'shell' && args.join(' ') === 'pm list packages -3') {
    io.out += (phone?.packages ?? []).map((name) => `package:${name}\n`).join('');
    return;
  }
  if (command === 'uninstall' && phone !== undefined) {
    phone.packages = phone.packages.filter((name) => name !== args[0]);
    io.out += 'Success\n';
    return;
  }
  if (command === 'shell') return;
  fail(io, `adb: unknown command ${command ?? ''}\n`);
};
