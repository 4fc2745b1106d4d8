// What `simlock-agent doctor` finds in the agent's own place and what its --fix did. Drivers
// report findings about their own set only (ADR 0019): a finding names one device or file of the
// agent's, or, for what is not the agent's, says so and leaves it to a person (`fix` absent).

/** `problem`: the doctor exits 1 while it is there. `notice`: shown, never a failure. */
export type FindingSeverity = 'problem' | 'notice';

export interface DoctorFinding {
  /** Stable and machine-readable: `simctl.unavailable`, `adb.ini-without-avd`, `agent.stale-pid`… */
  kind: string;
  /** Who found it and repairs it: `agent` (the data directory) or a driver's kind. */
  source: string;
  /** The device (UDID, AVD name, serial) or file the finding is about. */
  subject: string;
  /** What is wrong, in a sentence. */
  problem: string;
  /** What --fix does, in a sentence; absent: --fix leaves it (a person decides). */
  fix?: string;
  severity: FindingSeverity;
}

/** A count the report shows: what was found healthy or left alone ("4 simulators taken in"). */
export interface DoctorTally {
  source: string;
  what: string;
  count: number;
}

export interface DoctorInspection {
  findings: DoctorFinding[];
  tallies: DoctorTally[];
}

/** What --fix did about one finding. */
export interface DoctorRepair {
  finding: DoctorFinding;
  /** True when the finding is gone: fixed now, or found gone on a second look. */
  done: boolean;
  /** What was done, or why not. */
  said: string;
}

export function problem(
  fields: Omit<DoctorFinding, 'severity'> & { severity?: FindingSeverity },
): DoctorFinding {
  return { severity: 'problem', ...fields };
}

export function sameFinding(a: DoctorFinding, b: DoctorFinding): boolean {
  return a.kind === b.kind && a.source === b.source && a.subject === b.subject;
}

/**
 * Repairs `wanted` against a fresh inspection: a finding no longer there is reported done and
 * left alone, so --fix acts only on what is still wrong now (a device may have changed since the
 * report). `act` runs for each finding that is still there and has a fix.
 */
export async function repairStillThere(
  wanted: readonly DoctorFinding[],
  fresh: DoctorInspection,
  act: (finding: DoctorFinding) => Promise<string>,
): Promise<DoctorRepair[]> {
  const repairs: DoctorRepair[] = [];
  for (const finding of wanted) {
    const now = fresh.findings.find((candidate) => sameFinding(candidate, finding));
    if (now === undefined) {
      repairs.push({ finding, done: true, said: 'already gone' });
    } else if (now.fix === undefined) {
      repairs.push({ finding, done: false, said: 'left for a person' });
    } else {
      try {
        repairs.push({ finding, done: true, said: await act(now) });
      } catch (error) {
        repairs.push({ finding, done: false, said: `failed: ${(error as Error).message}` });
      }
    }
  }
  return repairs;
}

/** Whether a process with this id runs (EPERM: it runs, as another user). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
