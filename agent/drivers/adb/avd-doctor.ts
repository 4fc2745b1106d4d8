// What `simlock-agent doctor` checks of the adb driver's own place (ADR 0019): the agent's AVD
// home (<dataDir>/avd) and the emulators on its own adb server, and what --fix does there. An AVD
// is `<name>.ini` (where it is) plus `<name>.avd/config.ini`: `emulator -list-avds` lists the .ini
// files (android/avd/scanner.c), so a folder without its .ini is invisible and an .ini without its
// folder cannot boot. Lock files left in a folder by a crashed emulator make the next boot fail
// ("Running multiple emulators with the same AVD"). Phones, the default adb server and the default
// AVD home are never looked at, save adopted AVDs the config names.
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import {
  problem,
  processRuns,
  repairStillThere,
  type DoctorFinding,
  type DoctorInspection,
  type DoctorRepair,
} from '../doctor-finding.js';
import { parseAvdList, parseIni } from './adb-output.js';
import type { AdbServers } from './adb-servers.js';

export interface AvdDoctorPlace {
  servers: AdbServers;
  /** The agent's AVD home. */
  ownHome: string;
  /** AVD names of the default home the config adopts: theirs to run on the agent's server. */
  adopt: ReadonlySet<string>;
  /** Where the driver marks AVDs to wipe at their next boot (one empty file per AVD). */
  wipeDir: string;
}

const AVD_NAME = /^[A-Za-z0-9._-]{1,128}$/;

/** What one AVD of the own home has on disk. */
interface AvdOnDisk {
  name: string;
  /** `<name>.ini` exists. */
  ini: boolean;
  /** The AVD's folder: the .ini's `path`, else `<name>.avd` beside it. */
  dir: string;
  dirExists: boolean;
  configIni: string | undefined;
}

export class AvdDoctor {
  readonly #place: AvdDoctorPlace;

  constructor(place: AvdDoctorPlace) {
    this.#place = place;
  }

  async inspect(): Promise<DoctorInspection> {
    const avds = await this.#readHome();
    const running = await this.#runningOnOwnServer();
    const runningAvds = new Set(running.values());
    const findings: DoctorFinding[] = [];
    let healthy = 0;
    for (const avd of avds) {
      if (avd.ini && !avd.dirExists) {
        findings.push(
          problem({
            kind: 'adb.ini-without-avd',
            source: 'adb',
            subject: avd.name,
            problem: `${avd.name}.ini points at ${avd.dir}, which is gone: an AVD that cannot boot`,
            fix: `remove ${join(this.#place.ownHome, `${avd.name}.ini`)}`,
          }),
        );
        continue;
      }
      if (avd.configIni === undefined) {
        findings.push(
          problem({
            kind: 'adb.avd-without-config',
            source: 'adb',
            subject: avd.name,
            problem: `${avd.dir} has no config.ini: a half-made or half-deleted AVD`,
            fix: `remove ${[ownFolder(this.#place.ownHome, avd), avd.ini ? `${avd.name}.ini` : undefined].filter(Boolean).join(' and ')}`,
          }),
        );
        continue;
      }
      if (!avd.ini) {
        findings.push(
          problem({
            kind: 'adb.avd-without-ini',
            source: 'adb',
            subject: avd.name,
            problem: `${avd.dir} has no ${avd.name}.ini, so the emulator does not list it`,
            fix: `take it in: write ${avd.name}.ini pointing at it, as avdmanager does`,
          }),
        );
      } else {
        healthy += 1;
      }
      const inHome = avd.dir === join(this.#place.ownHome, `${avd.name}.avd`);
      if (inHome && !runningAvds.has(avd.name)) findings.push(...(await this.#staleLocks(avd)));
    }
    const known = new Set(avds.map((avd) => avd.name));
    for (const [serial, avd] of running) {
      if (known.has(avd) || this.#place.adopt.has(avd)) continue;
      findings.push(
        problem({
          kind: 'adb.foreign-emulator',
          source: 'adb',
          subject: serial,
          problem: `${serial} on the agent's adb server (${this.#place.servers.port}) runs ${avd}, which is neither in the agent's AVD home nor adopted`,
          fix: `stop it (adb -P ${this.#place.servers.port} -s ${serial} emu kill)`,
        }),
      );
    }
    findings.push(...(await this.#orphanWipeMarks(known)));
    return {
      findings,
      tallies: [
        { source: 'adb', what: "AVDs of the agent's home taken in", count: healthy },
        { source: 'adb', what: "emulators on the agent's adb server", count: running.size },
      ],
    };
  }

  async repair(findings: readonly DoctorFinding[]): Promise<DoctorRepair[]> {
    return repairStillThere(findings, await this.inspect(), (finding) => this.#act(finding));
  }

  async #act(finding: DoctorFinding): Promise<string> {
    const home = this.#place.ownHome;
    const name = finding.subject;
    switch (finding.kind) {
      case 'adb.ini-without-avd':
        await rm(join(home, `${name}.ini`), { force: true });
        return `removed ${name}.ini`;
      case 'adb.avd-without-config': {
        // A folder the .ini places outside the agent's home is not the agent's to remove.
        const folder = ownFolder(home, await readAvd(home, name));
        if (folder !== undefined) await rm(folder, { recursive: true, force: true });
        await rm(join(home, `${name}.ini`), { force: true });
        return `removed ${folder ?? `${name}.ini`}`;
      }
      case 'adb.avd-without-ini': {
        const dir = join(home, `${name}.avd`);
        const config = parseIni((await readFile(join(dir, 'config.ini'), 'utf8')).slice(0, 65_536));
        await writeFile(join(home, `${name}.ini`), avdIni(dir, config));
        return `wrote ${name}.ini: taken in`;
      }
      case 'adb.stale-lock':
        await rm(name, { recursive: true, force: true });
        return `removed ${name}`;
      case 'adb.foreign-emulator': {
        const result = await this.#place.servers.runOnAgent(['-s', name, 'emu', 'kill']);
        if (result.exitCode !== 0) throw new Error(result.stderr.trim().slice(0, 300));
        return `stopped (adb -P ${this.#place.servers.port} -s ${name} emu kill)`;
      }
      case 'adb.orphan-wipe-mark':
        await rm(name, { force: true });
        return `removed ${name}`;
      default:
        throw new Error(`adb has no repair for ${finding.kind}`);
    }
  }

  /** The AVDs of the own home: every `<name>.ini` and every `<name>.avd` folder. */
  async #readHome(): Promise<AvdOnDisk[]> {
    const home = this.#place.ownHome;
    const entries = await readdir(home).catch(() => [] as string[]);
    const names = new Set<string>();
    for (const entry of entries) {
      const name = /^(.+)\.(ini|avd)$/.exec(entry)?.[1];
      if (name !== undefined && AVD_NAME.test(name)) names.add(name);
    }
    const avds: AvdOnDisk[] = [];
    for (const name of [...names].sort()) avds.push(await readAvd(home, name));
    return avds;
  }

  /** Serial → AVD name of each emulator on the agent's own server. */
  async #runningOnOwnServer(): Promise<Map<string, string>> {
    const running = new Map<string, string>();
    for (const entry of await this.#place.servers.agentEmulators()) {
      const answer = await this.#place.servers.runOnAgent([
        '-s',
        entry.serial,
        'emu',
        'avd',
        'name',
      ]);
      const name = answer.exitCode === 0 ? parseAvdList(answer.stdout)[0] : undefined;
      if (name !== undefined && name !== 'OK') running.set(entry.serial, name);
    }
    return running;
  }

  /** Lock files in a folder no emulator of the agent's server runs, held by no live process. */
  async #staleLocks(avd: AvdOnDisk): Promise<DoctorFinding[]> {
    const entries = await readdir(avd.dir).catch(() => [] as string[]);
    const findings: DoctorFinding[] = [];
    for (const entry of entries.filter((name) => name.endsWith('.lock')).sort()) {
      const path = join(avd.dir, entry);
      const pid = await lockPid(path);
      if (pid !== undefined && processRuns(pid)) {
        findings.push({
          kind: 'adb.held-lock',
          source: 'adb',
          subject: path,
          problem: `${avd.name} is locked by process ${pid}, which runs but not on the agent's adb server`,
          severity: 'notice',
        });
        continue;
      }
      findings.push(
        problem({
          kind: 'adb.stale-lock',
          source: 'adb',
          subject: path,
          problem: `a lock left by an emulator of ${avd.name} that no longer runs: its next boot fails with "Running multiple emulators with the same AVD"`,
          fix: 'remove the lock',
        }),
      );
    }
    return findings;
  }

  /** Wipe marks of AVDs the home no longer has. */
  async #orphanWipeMarks(known: ReadonlySet<string>): Promise<DoctorFinding[]> {
    const marks = await readdir(this.#place.wipeDir).catch(() => [] as string[]);
    return marks
      .filter((name) => !known.has(name) && !this.#place.adopt.has(name))
      .sort()
      .map((name) =>
        problem({
          kind: 'adb.orphan-wipe-mark',
          source: 'adb',
          subject: join(this.#place.wipeDir, name),
          problem: `a mark to wipe ${name} at its next boot, but the agent has no such AVD`,
          fix: 'remove the mark',
        }),
      );
  }
}

function ownFolder(home: string, avd: AvdOnDisk): string | undefined {
  return avd.dirExists && avd.dir === join(home, `${avd.name}.avd`) ? avd.dir : undefined;
}

async function readAvd(home: string, name: string): Promise<AvdOnDisk> {
  const iniText = await readFile(join(home, `${name}.ini`), 'utf8').catch(() => undefined);
  const path = iniText === undefined ? undefined : parseIni(iniText.slice(0, 65_536)).get('path');
  const dir = path !== undefined && isAbsolute(path) ? path : join(home, `${name}.avd`);
  const dirExists = await stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
  const configIni = dirExists
    ? await readFile(join(dir, 'config.ini'), 'utf8').catch(() => undefined)
    : undefined;
  return { name, ini: iniText !== undefined, dir, dirExists, configIni };
}

/**
 * The `<name>.ini` avdmanager writes beside an AVD's folder: the encoding, the folder's absolute
 * path and the target platform (from config.ini's `target`, else its first system image folder).
 */
export function avdIni(dir: string, config: ReadonlyMap<string, string>): string {
  const target =
    config.get('target') ?? /(android-[A-Za-z0-9.]+)/.exec(config.get('image.sysdir.1') ?? '')?.[1];
  return `avd.ini.encoding=UTF-8\npath=${dir}\n${target !== undefined ? `target=${target}\n` : ''}`;
}

/** The pid in a lock: the file's text, or a `pid` file in a lock folder; undefined if none. */
async function lockPid(path: string): Promise<number | undefined> {
  const text =
    (await readFile(path, 'utf8').catch(() => undefined)) ??
    (await readFile(join(path, 'pid'), 'utf8').catch(() => undefined));
  const pid = Number(text?.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
