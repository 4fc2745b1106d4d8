// `simlock-agent doctor`: compares the agent's own place (its data directory, its simulator set or
// record, its AVD home and adb server) with what the tools list, and reports; with `fix`, repairs
// what is the agent's (deletes its leftovers, takes in what is its own, removes stale files) and
// looks again. Nothing outside the agent's place is touched (ADR 0019): the drivers name only
// their own devices, and count the rest. --fix is refused while an agent runs on the data dir.
import type { Driver } from './drivers/driver.js';
import type {
  DoctorFinding,
  DoctorInspection,
  DoctorRepair,
  DoctorTally,
} from './drivers/doctor-finding.js';
import { inspectDataDir, repairDataDir } from './doctor-data-dir.js';

export interface DoctorOptions {
  dataDir: string;
  /** The config's drivers; undefined when they could not be made (a finding then). */
  driver: Driver | undefined;
  fix: boolean;
}

export interface DoctorRun {
  dataDir: string;
  fix: boolean;
  /** The pid of an agent running on the data dir, if one runs. */
  agentPid?: number;
  findings: DoctorFinding[];
  tallies: DoctorTally[];
  /** What --fix did, one per finding it had a fix for. */
  repairs: DoctorRepair[];
  /** Problems still there: after --fix, what a second look found. */
  left: DoctorFinding[];
}

/** --fix while an agent runs on the same data dir. */
export class DoctorRefusal extends Error {}

export async function runDoctor(options: DoctorOptions): Promise<DoctorRun> {
  const first = await inspectAll(options);
  const agentPid = first.agentPid;
  const base = { dataDir: options.dataDir, fix: options.fix, ...(agentPid ? { agentPid } : {}) };
  if (!options.fix) {
    return { ...base, ...first.inspection, repairs: [], left: problemsOf(first.inspection) };
  }
  if (agentPid !== undefined) {
    throw new DoctorRefusal(
      `an agent runs on ${options.dataDir} (pid ${agentPid}): stop it before --fix, or run without --fix to report only`,
    );
  }
  const fixable = first.inspection.findings.filter((finding) => finding.fix !== undefined);
  const repairs = [
    ...(await repairDataDir(
      options.dataDir,
      fixable.filter((finding) => finding.source === 'agent'),
    )),
    ...(options.driver?.repair !== undefined
      ? await options.driver.repair(fixable.filter((finding) => finding.source !== 'agent'))
      : []),
  ];
  const second = await inspectAll(options);
  return { ...base, ...first.inspection, repairs, left: problemsOf(second.inspection) };
}

async function inspectAll(
  options: DoctorOptions,
): Promise<{ inspection: DoctorInspection; agentPid?: number }> {
  const dataDir = await inspectDataDir(options.dataDir);
  const agentPid = dataDir.agent.state === 'running' ? dataDir.agent.pid : undefined;
  const findings = [...dataDir.findings];
  const tallies = [...dataDir.tallies];
  const missing = findings.some((finding) => finding.kind === 'agent.data-dir-missing');
  if (!missing && options.driver?.inspect !== undefined) {
    try {
      const drivers = await options.driver.inspect();
      findings.push(...drivers.findings);
      tallies.push(...drivers.tallies);
    } catch (error) {
      findings.push({
        kind: 'agent.driver-failed',
        source: 'agent',
        subject: options.driver.kind,
        problem: `could not look at the devices: ${(error as Error).message}`.slice(0, 500),
        severity: 'problem',
      });
    }
  }
  return { inspection: { findings, tallies }, ...(agentPid ? { agentPid } : {}) };
}

function problemsOf(inspection: DoctorInspection): DoctorFinding[] {
  return inspection.findings.filter((finding) => finding.severity === 'problem');
}

/** 0: healthy, or all fixed; 1: problems left. */
export function doctorExitCode(run: DoctorRun): 0 | 1 {
  return run.left.length === 0 ? 0 : 1;
}
