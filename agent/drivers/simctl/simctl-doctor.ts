// What `simlock-agent doctor` checks of the simctl driver's own place (ADR 0019), and what --fix
// does there. In the own set every simulator is the agent's: an unavailable one (its runtime was
// removed) is a leftover to delete, the others are taken in. In `default-recorded` the record
// decides: a recorded UDID the default set no longer has is dropped from the record, a recorded
// simulator that became unavailable is deleted; a simulator named like simlock's but not recorded
// is only reported (the record, not a name, says what is the agent's), and the rest of the default
// set is counted, never named or touched.
import { stat } from 'node:fs/promises';
import { runChecked, type CommandRunner } from '../command.js';
import {
  problem,
  repairStillThere,
  type DoctorFinding,
  type DoctorInspection,
  type DoctorRepair,
} from '../doctor-finding.js';
import type { CreatedRecord } from './created-record.js';
import { simctl } from './simctl-exec.js';
import { readSimctlList } from './simctl-list.js';

/**
 * Names simlock gives its simulators: `simlock-<model>-<6 hex>` (device-preparation.ts) and, in
 * the default set, `simlock <model> <6 hex>` (recordedName).
 */
export const SIMLOCK_NAME = /^simlock(-[a-z0-9-]+-| .+ )[0-9a-f]{6}$/;

export interface SimctlDoctorPlace {
  run: CommandRunner;
  /** The own set's folder; undefined in `default-recorded`. */
  setDir: string | undefined;
  record: CreatedRecord;
  /** UDIDs adopted by config, upper case. */
  adopted: ReadonlySet<string>;
}

interface ListedSimulator {
  udid: string;
  name: string;
  isAvailable: boolean;
  availabilityError?: string | undefined;
}

export class SimctlDoctor {
  readonly #place: SimctlDoctorPlace;

  constructor(place: SimctlDoctorPlace) {
    this.#place = place;
  }

  async inspect(): Promise<DoctorInspection> {
    return this.#place.setDir !== undefined
      ? this.#inspectOwnSet(this.#place.setDir)
      : this.#inspectRecorded();
  }

  async repair(findings: readonly DoctorFinding[]): Promise<DoctorRepair[]> {
    return repairStillThere(findings, await this.inspect(), (finding) => this.#act(finding));
  }

  async #inspectOwnSet(setDir: string): Promise<DoctorInspection> {
    // No folder yet: nothing made yet (the doctor makes nothing to look).
    const made = await stat(setDir).then(
      () => true,
      () => false,
    );
    const findings: DoctorFinding[] = [];
    let healthy = 0;
    for (const simulator of made ? await this.#list(setDir) : []) {
      if (simulator.isAvailable) healthy += 1;
      else findings.push(unavailable(simulator, `xcrun simctl --set ${setDir} delete`));
    }
    return {
      findings: [...findings, ...(await this.#adoptedMissing())],
      tallies: [{ source: 'simctl', what: 'simulators of the own set taken in', count: healthy }],
    };
  }

  async #inspectRecorded(): Promise<DoctorInspection> {
    let recorded: Set<string>;
    try {
      recorded = await this.#place.record.udids();
    } catch (error) {
      // Without the record nothing in the default set can be told to be the agent's.
      return {
        findings: [
          problem({
            kind: 'simctl.record-unreadable',
            source: 'simctl',
            subject: this.#place.record.path,
            problem: `${(error as Error).message}; the simulators it names cannot be told apart until it is fixed`,
          }),
        ],
        tallies: [],
      };
    }
    const byUdid = new Map(
      (await this.#list(undefined)).map((sim) => [sim.udid.toUpperCase(), sim]),
    );
    const recordedUpper = new Set([...recorded].map((udid) => udid.toUpperCase()));
    const findings: DoctorFinding[] = [];
    let healthy = 0;
    for (const udid of recorded) {
      const simulator = byUdid.get(udid.toUpperCase());
      if (simulator === undefined) {
        findings.push(
          problem({
            kind: 'simctl.recorded-missing',
            source: 'simctl',
            subject: udid,
            problem: `recorded in ${this.#place.record.path} but the default set no longer has it`,
            fix: 'drop it from the record',
          }),
        );
      } else if (!simulator.isAvailable) {
        findings.push(
          unavailable(simulator, 'xcrun simctl delete', ', then drop it from the record'),
        );
      } else {
        healthy += 1;
      }
    }
    let others = 0;
    for (const [udid, simulator] of byUdid) {
      if (recordedUpper.has(udid) || this.#place.adopted.has(udid)) continue;
      if (SIMLOCK_NAME.test(simulator.name)) {
        findings.push({
          kind: 'simctl.unrecorded-lookalike',
          source: 'simctl',
          subject: simulator.udid,
          problem: `"${simulator.name}" is named like simlock's but not recorded, so not simlock's to touch; adopt it with simctl.adopt if it is`,
          severity: 'notice',
        });
      } else {
        others += 1;
      }
    }
    return {
      findings: [...findings, ...(await this.#adoptedMissing(byUdid))],
      tallies: [
        { source: 'simctl', what: 'recorded simulators taken in', count: healthy },
        {
          source: 'simctl',
          what: "others' simulators of the default set left alone",
          count: others,
        },
      ],
    };
  }

  /** Adopted UDIDs the default set does not have: the config's to fix, so a notice. */
  async #adoptedMissing(known?: Map<string, ListedSimulator>): Promise<DoctorFinding[]> {
    if (this.#place.adopted.size === 0) return [];
    const defaults =
      known ?? new Map((await this.#list(undefined)).map((sim) => [sim.udid.toUpperCase(), sim]));
    return [...this.#place.adopted]
      .filter((udid) => !defaults.get(udid)?.isAvailable)
      .map((udid) => ({
        kind: 'simctl.adopted-missing',
        source: 'simctl',
        subject: udid,
        problem: 'adopted (simctl.adopt) but not an available simulator of the default set',
        severity: 'notice' as const,
      }));
  }

  async #act(finding: DoctorFinding): Promise<string> {
    const { run, record, setDir } = this.#place;
    switch (finding.kind) {
      case 'simctl.unavailable': {
        const argv = [...simctl(setDir), 'delete', finding.subject] as const;
        await runChecked(run, argv);
        if (setDir === undefined) await record.remove(finding.subject);
        return `deleted (${argv.join(' ')})${setDir === undefined ? ' and dropped from the record' : ''}`;
      }
      case 'simctl.recorded-missing':
        await record.remove(finding.subject);
        return `dropped from ${record.path}`;
      default:
        throw new Error(`simctl has no repair for ${finding.kind}`);
    }
  }

  async #list(set: string | undefined): Promise<ListedSimulator[]> {
    const argv = [...simctl(set), 'list', '-j', 'devices'] as const;
    const result = await runChecked(this.#place.run, argv);
    return Object.values(readSimctlList(result.stdout).devices).flat();
  }
}

function unavailable(simulator: ListedSimulator, deleteCommand: string, more = ''): DoctorFinding {
  const why = simulator.availabilityError ?? 'no reason given';
  return problem({
    kind: 'simctl.unavailable',
    source: 'simctl',
    subject: simulator.udid,
    problem: `"${simulator.name}" is unavailable (${why}): a leftover the agent cannot boot`,
    fix: `delete it (${deleteCommand} ${simulator.udid})${more}`,
  });
}
