// The program of the simctl stand-in (simctl-stand-in.ts): plain JavaScript run by node as
// `xcrun`. It reads the host (device types, runtimes), the refusal texts and its state from the
// files beside it, changes the state under a lock (several simctl calls may run at once), and
// answers as simctl does. What it does not serve it refuses with exit 97 and "stand-in", so a
// test fails loudly instead of passing on an answer real simctl would not give.
export const SIMCTL_STAND_IN_SOURCE = String.raw`
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const dir = path.dirname(process.argv[1]);
const args = process.argv.slice(2);
fs.appendFileSync(path.join(dir, 'xcrun.calls.jsonl'), JSON.stringify(args) + '\n');
const host = JSON.parse(fs.readFileSync(path.join(dir, 'simctl-host.json'), 'utf8'));
const outputs = JSON.parse(fs.readFileSync(path.join(dir, 'simctl-outputs.json'), 'utf8'));
const stateFile = path.join(dir, 'simctl-state.json');
const DEFAULT_SET = 'default';
const HOLDER_SUBCOMMANDS = new Set(['addmedia', 'appinfo', 'get_app_container', 'getenv',
  'icloud_sync', 'install', 'io', 'keychain', 'launch', 'listapps', 'location', 'logverbose',
  'openurl', 'pbcopy', 'pbpaste', 'privacy', 'push', 'spawn', 'status_bar', 'terminate', 'ui',
  'uninstall']);

const fill = (text, values) => text.replace(/\{(\w+)\}/g, (_, key) => String(values[key] ?? ''));
const ok = (out) => ({ code: 0, out: out || '', err: '' });
const refuse = (name, values) => {
  const refusal = outputs.refusals[name];
  return { code: refusal.exitCode, out: '', err: fill(refusal.stderr, values || {}) };
};
const standIn = (why) => ({ code: 97, out: '', err: 'stand-in xcrun: ' + why + '\n' });

function withState(change) {
  const lock = stateFile + '.lock';
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + 30000;
  for (;;) {
    try { fs.mkdirSync(lock); break; } catch (error) {
      if (error.code !== 'EEXIST' || Date.now() > deadline) throw error;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
  try {
    const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    const answer = change(state);
    const temporary = stateFile + '.' + process.pid + '.tmp';
    fs.writeFileSync(temporary, JSON.stringify(state, null, 2));
    fs.renameSync(temporary, stateFile);
    return answer;
  } finally {
    fs.rmdirSync(lock);
  }
}

// simctl prints JSON as NSJSONSerialization does: "key" : value, and "/" escaped.
const appleJson = (value) => JSON.stringify(value, null, 2)
  .split('\n').map((line) => line.replace(/^(\s*"(?:[^"\\]|\\.)*"): /, '$1 : ')).join('\n')
  .replace(/\//g, '\\/') + '\n';

const versionParts = (text) => (text || '').split('.').map(Number);
function compare(a, b) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] || 0) - (b[i] || 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}
function supports(runtime, type) {
  if (runtime.supportedDeviceTypes && runtime.supportedDeviceTypes.length > 0) {
    return runtime.supportedDeviceTypes.some((t) => t.identifier === type.identifier);
  }
  const v = versionParts(runtime.version);
  return compare(v, versionParts(type.minRuntimeVersionString || '0')) >= 0 &&
    compare(v, versionParts(type.maxRuntimeVersionString || '65535.255.255')) <= 0;
}
const runtimeById = (id) => host.runtimes.find((r) => r.identifier === id);

function deviceJson(set, device) {
  const runtime = runtimeById(device.runtime);
  const folder = set === DEFAULT_SET ? '/Users/ci/Library/Developer/CoreSimulator/Devices' : set;
  const json = {};
  if (device.lastBootedAt) json.lastBootedAt = device.lastBootedAt;
  if (!runtime || !runtime.isAvailable) json.availabilityError = 'runtime profile not found using "System" match policy';
  Object.assign(json, {
    dataPath: folder + '/' + device.udid + '/data',
    dataPathSize: 18083840,
    logPath: '/Users/ci/Library/Logs/CoreSimulator/' + device.udid,
    udid: device.udid,
    isAvailable: Boolean(runtime && runtime.isAvailable),
    deviceTypeIdentifier: device.deviceTypeIdentifier,
    state: device.state,
    name: device.name,
  });
  return json;
}

function list(state, set, rest) {
  const kinds = ['devicetypes', 'runtimes', 'devices', 'pairs'];
  if (!rest.includes('-j') && !rest.includes('--json')) return standIn('only list -j is served');
  const others = rest.filter((a) => !['-j', '--json', '-v'].includes(a) && !kinds.includes(a));
  if (others.length > 0) return standIn('list search terms are not served: ' + others.join(' '));
  const wanted = kinds.filter((kind) => rest.includes(kind));
  const all = wanted.length === 0;
  const answer = {};
  if (all || wanted.includes('devicetypes')) answer.devicetypes = host.devicetypes;
  if (all || wanted.includes('runtimes')) answer.runtimes = host.runtimes;
  if (all || wanted.includes('devices')) {
    const devices = {};
    for (const runtime of host.runtimes) devices[runtime.identifier] = [];
    for (const device of state.sets[set] || []) {
      (devices[device.runtime] = devices[device.runtime] || []).push(deviceJson(set, device));
    }
    answer.devices = devices;
  }
  if (all || wanted.includes('pairs')) answer.pairs = {};
  return ok(appleJson(answer));
}

function create(state, devices, rest) {
  if (rest.length !== 3) return standIn('create is served with <name> <device type> <runtime>');
  const [name, typeArg, runtimeArg] = rest;
  const type = host.devicetypes.find((t) => t.identifier === typeArg || t.name === typeArg);
  if (!type) return refuse('invalidDeviceType', { arg: typeArg });
  const runtime = host.runtimes.find((r) => r.identifier === runtimeArg || r.name === runtimeArg);
  if (!runtime || !runtime.isAvailable) return refuse('invalidRuntime', { arg: runtimeArg });
  const values = { typeName: type.name, typeId: type.identifier, runtimeName: runtime.name,
    version: runtime.version, build: runtime.buildversion, runtimeId: runtime.identifier };
  if (!supports(runtime, type)) return refuse('incompatible', values);
  if (state.nextCreateFails === 'disk-full') {
    state.nextCreateFails = null;
    return refuse('diskFull', values);
  }
  const udid = crypto.randomUUID().toUpperCase();
  devices.push({ udid, name, deviceTypeIdentifier: type.identifier, runtime: runtime.identifier,
    state: 'Shutdown', erased: 0, boots: 0 });
  return ok(udid + '\n');
}

function boot(device) {
  if (device.state === 'Booted') return refuse('bootBooted');
  if (device.neverBoots) {
    // Told never to finish booting: it stays Booting (bootstatus waits for ever).
    device.state = 'Booting';
    return ok('');
  }
  device.state = 'Booted';
  device.boots += 1;
  device.lastBootedAt = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return ok('');
}

function run(state, set, subcommand, rest) {
  const devices = (state.sets[set] = state.sets[set] || []);
  const find = (udid) => devices.find((d) => d.udid.toUpperCase() === String(udid).toUpperCase());
  const target = rest[0];
  switch (subcommand) {
    case 'list':
      return list(state, set, rest);
    case 'create':
      return create(state, devices, rest);
    case 'boot': {
      const device = find(target);
      return device ? boot(device) : refuse('invalidDevice', { udid: target });
    }
    case 'bootstatus': {
      const device = find(target);
      if (!device) return refuse('invalidDevice', { udid: target });
      const values = { name: device.name, udid: device.udid,
        time: new Date().toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' +0000') };
      if (device.state === 'Booted') return ok(fill(outputs.bootstatusAlreadyBooted, values));
      if (!rest.includes('-b')) return standIn('bootstatus without -b waits forever on a shut-down device');
      boot(device);
      if (device.neverBoots) {
        // It prints that it monitors, then waits until its caller gives up and stops it, or until
        // the stand-in lets the boot complete (setNeverBoots false).
        return { code: 0, out: 'Monitoring boot status for ' + device.name + ' (' + device.udid + ').\n', err: '',
          hang: { set, udid: device.udid, values } };
      }
      return ok(fill(outputs.bootstatusBooted, values));
    }
    case 'shutdown': {
      if (target === 'all') {
        for (const device of devices) device.state = 'Shutdown';
        return ok('');
      }
      const device = find(target);
      if (!device) return refuse('invalidDevice', { udid: target });
      if (device.state === 'Shutdown') return refuse('shutdownShutdown');
      device.state = 'Shutdown';
      return ok('');
    }
    case 'erase': {
      const chosen = target === 'all' ? devices : [find(target)];
      if (!chosen[0] && target !== 'all') return refuse('invalidDevice', { udid: target });
      if (chosen.some((device) => device.state !== 'Shutdown')) return refuse('eraseBooted');
      for (const device of chosen) device.erased += 1;
      return ok('');
    }
    case 'delete': {
      if (rest.length === 0) return standIn('delete needs a device');
      for (const arg of rest) {
        if (arg === 'all' || arg === 'unavailable') {
          const keep = arg === 'all' ? () => false
            : (d) => Boolean(runtimeById(d.runtime) && runtimeById(d.runtime).isAvailable);
          state.sets[set] = devices.filter(keep);
          continue;
        }
        const device = find(arg);
        if (!device) return refuse('invalidDevice', { udid: arg });
        devices.splice(devices.indexOf(device), 1);
      }
      return ok('');
    }
    case 'getenv':
    case 'spawn': {
      // Both are answered by the running device's launchd_sim: a device not booted cannot.
      const device = find(target);
      if (!device) return refuse('invalidDevice', { udid: target });
      if (device.state !== 'Booted') return refuse('lookupInState', { state: device.state });
      if (subcommand === 'getenv' && rest[1] === 'HOME') {
        return ok(fill(outputs.getenvHome, { dataPath: deviceJson(set, device).dataPath }));
      }
      return ok('');
    }
    default:
      if (HOLDER_SUBCOMMANDS.has(subcommand)) {
        if (!find(target)) return refuse('invalidDevice', { udid: target });
        return ok(subcommand === 'launch' ? rest[1] + ': ' + (40000 + devices.length) + '\n' : '');
      }
      return standIn('simctl ' + subcommand + ' is not served');
  }
}

function main() {
  if (args[0] !== 'simctl') {
    return { code: 72, out: '', err: 'xcrun: error: unable to find utility "' + args[0] + '", not a developer tool or in PATH\n' };
  }
  let at = 1;
  let set = DEFAULT_SET;
  while (args[at] !== undefined && args[at].startsWith('--')) {
    if ((args[at] === '--set' || args[at] === '--profiles') && args[at + 1] !== undefined) {
      if (args[at] === '--set') set = path.resolve(args[at + 1]);
      at += 2;
    } else {
      return standIn('global option ' + args[at] + ' is not served');
    }
  }
  if (set !== DEFAULT_SET && !fs.existsSync(set)) {
    return standIn('the device set folder ' + set + ' does not exist (its caller makes it)');
  }
  const subcommand = args[at];
  if (subcommand === undefined) return standIn('simctl needs a subcommand');
  return withState((state) => run(state, set, subcommand, args.slice(at + 1)));
}

const answer = main();
if (answer.out) process.stdout.write(answer.out);
if (answer.err) process.stderr.write(answer.err);
process.exitCode = answer.code;
if (answer.hang) {
  // Outside the state lock: the boot completes once the device may boot again (as bootstatus sees).
  const { set, udid, values } = answer.hang;
  const completed = () => withState((state) => {
    const device = (state.sets[set] || []).find((d) => d.udid === udid);
    if (!device || device.neverBoots) return undefined;
    if (device.state !== 'Booted') boot(device);
    return fill(outputs.bootstatusBooted, values);
  });
  if (process.standInWait) {
    // In the stand-in server: it asks again without blocking its process.
    process.standInWait(completed);
  } else {
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const until = Date.now() + 600000;
    while (Date.now() < until) {
      Atomics.wait(pause, 0, 0, 100);
      const rest = completed();
      if (rest !== undefined) { process.stdout.write(rest); break; }
    }
  }
}
`;
