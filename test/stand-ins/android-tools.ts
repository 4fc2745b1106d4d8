// Test helper: what the stand-in `adb`, `emulator` and `avdmanager` executables do (see
// android-stand-ins.ts, which writes them). Node runs this file directly (type stripping), so it
// imports only node: modules and uses erasable TypeScript only. All state is one JSON file beside
// the executables, read and written under a lock by every call: AVD homes by path, adb servers by
// port, running emulators by console port, USB phones, installed images and device profiles.
// Outputs and error texts follow the real tools (sources in adb/testdata/README.md).
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type {
  AndroidState,
  AvdRecord,
  CallRecord,
  Profile,
  ServerRecord,
} from './android-state.js';

class Exit extends Error {
  code: number;
  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

interface Io {
  out: string;
  err: string;
  /** One read of stdin, as avdmanager's prompt does (blocks while the pipe is open). */
  readLine: () => string;
}

export const STATE_FILE = 'android-state.json';
export const CALLS_FILE = 'android-calls.jsonl';

export function avdHomeOf(env: NodeJS.ProcessEnv): string {
  if (env.ANDROID_AVD_HOME) return env.ANDROID_AVD_HOME;
  if (env.ANDROID_USER_HOME) return join(env.ANDROID_USER_HOME, 'avd');
  return join(env.HOME ?? '/nonexistent', '.android', 'avd');
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `change` on the state under a lock (mkdir is atomic), writing it back after. */
export function withState<T>(dir: string, change: (state: AndroidState) => T): T {
  const lock = join(dir, 'android-state.lock');
  for (let tries = 0; ; tries++) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (tries > 2000) throw new Error('stand-in state lock held too long');
      sleepSync(5);
    }
  }
  try {
    const file = join(dir, STATE_FILE);
    const state = JSON.parse(readFileSync(file, 'utf8')) as AndroidState;
    const result = change(state);
    writeFileSync(file, JSON.stringify(state, null, 1));
    return result;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** `system-images;android-34;google_apis;x86_64` → its parts. */
function imageParts(image: string) {
  const [, platform = '', tag = '', abi = ''] = image.split(';');
  return { platform, tag, abi, api: /android-(\d+)/.exec(platform)?.[1] ?? '0' };
}

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

function option(argv: string[], name: string): string | undefined {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
}

function fail(io: Io, text: string, code = 1): never {
  io.err += text;
  throw new Exit(code);
}

// --- avdmanager ---------------------------------------------------------------------------------

const PROGRESS = '[=======================================] 100% Loading local repository...\n';

function avdmanager(state: AndroidState, argv: string[], env: NodeJS.ProcessEnv, io: Io): void {
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
}

// --- emulator -----------------------------------------------------------------------------------

function emulator(state: AndroidState, argv: string[], env: NodeJS.ProcessEnv, io: Io): void {
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
}

// --- adb ----------------------------------------------------------------------------------------

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

function adb(state: AndroidState, argv: string[], env: NodeJS.ProcessEnv, io: Io): void {
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
}

// --- entry --------------------------------------------------------------------------------------

const TOOLS = { adb, emulator, avdmanager } as const;

export interface ToolResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one call of `tool` on the state in `dir`: what an executable does, callable in process too
 * (a test that makes thousands of calls). `readLine` is one read of the tool's stdin.
 */
export function runTool(
  tool: string,
  dir: string,
  argv: string[],
  env: NodeJS.ProcessEnv,
  readLine: () => string,
): ToolResult {
  const serverPort = Number(
    (tool === 'adb' ? option(argv, '-P') : undefined) ?? (env.ANDROID_ADB_SERVER_PORT || '5037'),
  );
  const record: CallRecord = {
    tool,
    argv,
    avdHome: avdHomeOf(env),
    serverPort,
    env: {
      ANDROID_AVD_HOME: env.ANDROID_AVD_HOME,
      ANDROID_ADB_SERVER_PORT: env.ANDROID_ADB_SERVER_PORT,
      ADB_EMU: env.ADB_EMU,
      ADB_USB: env.ADB_USB,
      ADB_MDNS: env.ADB_MDNS,
    },
  };
  appendFileSync(join(dir, CALLS_FILE), `${JSON.stringify(record)}\n`);
  const io: Io = { out: '', err: '', readLine };
  let exitCode = 0;
  withState(dir, (state) => {
    // A tool that fails still leaves its changes (a disk-full create uses up its control field).
    try {
      TOOLS[tool as keyof typeof TOOLS](state, argv, env, io);
    } catch (error) {
      if (!(error instanceof Exit)) throw error;
      exitCode = error.code;
    }
  });
  return { exitCode, stdout: io.out, stderr: io.err };
}

/** The executable's entry: `tool` is its name, `dir` where it and the state are. */
export function main(tool: string, dir: string): void {
  const readLine = () => {
    const buffer = Buffer.alloc(256);
    const count = readSync(0, buffer, 0, 256, null);
    return buffer.subarray(0, count).toString();
  };
  const result = runTool(tool, dir, process.argv.slice(2), process.env, readLine);
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
}
