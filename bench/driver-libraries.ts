// The device-tool libraries against our drivers (docs/adr/0020-device-tool-libraries.md):
// Appium's node-simctl and appium-adb and DeviceFarmer's @devicefarmer/adbkit. For each: its
// installed tree, what it adds to the agent's esbuild bundle, a cold start that loads it, and what
// one device listing costs against the drivers' stand-ins and the recorded outputs (adbkit
// against a fake adb server), with whether it finds the same devices as our parsers.
//
// The libraries are not dependencies of simlock: they are read from the folder given with --libs,
// one npm project per library, made with
//   npm install --prefix DIR/node-simctl node-simctl
//   npm install --prefix DIR/appium-adb appium-adb
//   npm install --prefix DIR/adbkit @devicefarmer/adbkit
//
//   tools/with-node.sh node --import tsx bench/driver-libraries.ts --libs DIR [--runs 10] [--json [FILE]]
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { packageRoot } from '../runtime/index.js';
import {
  buildEntry,
  removeScratch,
  writeEntries,
  type Bundle,
} from './driver-libraries/bundles.js';
import { installFigures, LIBRARIES, missingLibraries } from './driver-libraries/libraries.js';
import { measureAdb } from './driver-libraries/listing-adb.js';
import { measureSimctl } from './driver-libraries/listing-simctl.js';
import { measureRealAdb } from './driver-libraries/real-adb.js';
import type { ListingFigures, ParseComparison } from './driver-libraries/listing.js';
import { measureStarts, type StartProgram } from './driver-libraries/start-time.js';
import { CommandLine, machineName } from './harness/index.js';

const args = new CommandLine();
args.only(['--libs', '--runs', '--json']);
const LIBS = args.string('--libs');
const RUNS = args.integer('--runs', 10, 1);
const JSON_PATH = args.has('--json')
  ? (args.optionalValue('--json') ?? join('bench', 'out', 'driver-libraries.json'))
  : undefined;

if (LIBS === undefined) {
  console.error('usage: bench/driver-libraries.ts --libs DIR [--runs 10] [--json [FILE]]');
  process.exit(64);
}
const libs = resolve(LIBS);
const missing = await missingLibraries(libs);
if (missing.length > 0) {
  console.error(`The libraries are not installed under ${libs}; install them with:`);
  for (const command of missing) console.error(`  ${command}`);
  process.exit(66);
}

const root = packageRoot(import.meta.url);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
console.log(`${machineName()}; medians of ${RUNS} runs`);

// --- installed --------------------------------------------------------------------------------
console.log(
  '\ninstalled: version, licence, Node engines, dependencies, packages, disk (du), files',
);
const installed = [];
for (const library of LIBRARIES) {
  const figures = await installFigures(libs, library);
  installed.push({ library: library.package, ...figures });
  console.log(
    `  ${library.package} ${figures.version}, ${figures.license}, node ${figures.nodeEngines}, ` +
      `${figures.dependencies} deps, ${figures.packages} packages, ${mib(figures.diskBytes)}, ` +
      `${mib(figures.apparentBytes)}; heaviest: ${figures.largest.map((p) => `${p.name} ${mib(p.diskBytes)}`).join(', ')}`,
  );
}

// --- bundles ----------------------------------------------------------------------------------
const entries = await writeEntries(root, libs);
const empty = await buildEntry(root, entries.empty);
const agent = await buildEntry(root, entries.agent);
const ours = {
  simctl: await buildEntry(root, entries.ours.simctl),
  adb: await buildEntry(root, entries.ours.adb),
};
console.log('\nbundle (bin/bundle.mjs settings; .mjs bytes, source maps not counted)');
console.log(`  empty program ${empty.bytes} B; the agent ${kib(agent.bytes)}`);
const bundles: Record<string, unknown> = { empty: empty.bytes, agent: agent.bytes };
const libraryBundles = new Map<string, Bundle>();
for (const { library, alone, withAgent } of entries.libraries) {
  const bundle = await buildEntry(root, alone, library.externalIfNeeded);
  const combined = await buildEntry(root, withAgent, library.externalIfNeeded);
  libraryBundles.set(library.key, bundle);
  bundles[library.key] = {
    alone: bundle.bytes - empty.bytes,
    addedToAgent: combined.bytes - agent.bytes,
    external: alone.external,
    failure: bundle.failure,
  };
  console.log(
    `  ${library.key}: ${kib(bundle.bytes - empty.bytes)} alone, +${kib(combined.bytes - agent.bytes)} to the agent` +
      (bundle.failure
        ? `; with the repository's settings the build fails (${bundle.failure}); built with ${alone.external.join(', ')} external`
        : ''),
  );
}
for (const [name, bundle] of Object.entries(ours)) {
  bundles[`ours-${name}`] = bundle.bytes - empty.bytes;
  console.log(
    `  our ${name} driver alone (zod included, already in the agent): ${kib(bundle.bytes - empty.bytes)}`,
  );
}

// --- cold starts ------------------------------------------------------------------------------
const plain = (name: string, file: string): StartProgram => ({ name, args: [file], cwd: root });
const tsx = (name: string, file: string): StartProgram => ({
  name,
  args: ['--import', 'tsx', file],
  cwd: root,
});
const programs: StartProgram[] = [
  plain('node, empty program', entries.empty.file),
  ...entries.libraries.flatMap(({ library, alone }) => [
    plain(`${library.key} from node_modules`, alone.file),
    plain(`${library.key} bundled`, libraryBundles.get(library.key)!.file),
  ]),
  tsx('node --import tsx, empty program', entries.empty.file),
  tsx('our simctl driver through tsx', entries.ours.simctl.file),
  tsx('our adb driver through tsx', entries.ours.adb.file),
  plain('our simctl driver bundled', ours.simctl.file),
  plain('our adb driver bundled', ours.adb.file),
];
const starts = await measureStarts(programs, RUNS);
console.log('\ncold start: spawn to exit (median, min–max), CPU (median), RSS at the end');
for (const start of starts) {
  console.log(
    `  ${start.name.padEnd(34)} ${ms(start.medianMs).padStart(9)} (${start.minMs.toFixed(0)}–${start.maxMs.toFixed(0)})  ` +
      `CPU ${ms(start.cpuMs).padStart(9)}  ${start.rssMiB.toFixed(1)} MiB`,
  );
}

// --- listings ---------------------------------------------------------------------------------
const simctl = await measureSimctl(root, libs, RUNS);
const adb = await measureAdb(root, libs, RUNS);
const listings: ListingFigures[] = [...simctl.listings, ...adb.listings];
console.log('\none listing: processes and connections (first; after), median ms after the first');
for (const listing of listings) {
  console.log(
    `  ${listing.name.padEnd(44)} ${listing.first.processes} proc ${listing.first.connections} conn; ` +
      `${listing.after.processes} proc ${listing.after.connections} conn; ${ms(listing.medianMs)}`,
  );
  console.log(`    covers: ${listing.covers}`);
  for (const call of listing.calls) console.log(`    ran: ${call}`);
}
const parsing: ParseComparison[] = [simctl.parsing, ...adb.parsing];
console.log('\nthe recorded outputs parsed: the same devices found?');
for (const comparison of parsing) {
  const same = comparison.onlyOurs.length === 0 && comparison.onlyTheirs.length === 0;
  console.log(
    `  ${comparison.name}: ${same ? 'same' : 'differ'} (ours ${comparison.ours.length}, theirs ${comparison.theirs.length})` +
      (comparison.onlyOurs.length ? `; only ours: ${comparison.onlyOurs.join(', ')}` : '') +
      (comparison.onlyTheirs.length ? `; only theirs: ${comparison.onlyTheirs.join(', ')}` : ''),
  );
  for (const note of comparison.notes) console.log(`    ${note}`);
}

await removeScratch();
const realAdb = await measureRealAdb(libs, RUNS);
if (realAdb === undefined) {
  console.log('\nreal adb: none on PATH, not measured');
} else {
  console.log(
    `\nreal adb (${realAdb.adbVersion}), a server of its own, no device: one listing, median`,
  );
  console.log(`  adb -P <port> devices -l (ours)            ${ms(realAdb.adbClient)}`);
  console.log(`  appium-adb getConnectedDevices({verbose})  ${ms(realAdb.appiumAdb)}`);
  console.log(`  adbkit listDevicesWithPaths                ${ms(realAdb.adbkit)}`);
  console.log(`  adbkit host:version answered ${realAdb.adbkitServerVersion}`);
}

if (JSON_PATH) {
  await writeFile(
    JSON_PATH,
    JSON.stringify(
      {
        machine: machineName(),
        runs: RUNS,
        installed,
        bundles,
        starts,
        listings,
        parsing,
        realAdb,
      },
      null,
      2,
    ),
  );
  console.log(`\nfigures written to ${JSON_PATH}`);
}
