// How `simlock-agent doctor` shows a run: a table a person reads (finding, device or file, what
// --fix does or did, the problem under it), the counts, and a last line that says what is left;
// or the same as JSON (-o json). Pure.
import { sameFinding, type DoctorFinding, type DoctorRepair } from './drivers/doctor-finding.js';
import { doctorExitCode, type DoctorRun } from './doctor.js';

export function doctorJson(run: DoctorRun): string {
  const repairOf = (finding: DoctorFinding) => findRepair(run.repairs, finding);
  return `${JSON.stringify(
    {
      dataDir: run.dataDir,
      fix: run.fix,
      ...(run.agentPid !== undefined ? { agentPid: run.agentPid } : {}),
      healthy: doctorExitCode(run) === 0,
      findings: run.findings.map((finding) => {
        const repair = repairOf(finding);
        return repair === undefined
          ? finding
          : { ...finding, repair: { done: repair.done, said: repair.said } };
      }),
      tallies: run.tallies,
      left: run.left,
    },
    null,
    2,
  )}\n`;
}

export function doctorTable(run: DoctorRun): string {
  const lines: string[] = [];
  const mode = run.fix ? 'repairing' : 'report only (--fix repairs)';
  lines.push(`simlock-agent doctor: ${run.dataDir}, ${mode}`);
  if (run.agentPid !== undefined) {
    lines.push(`An agent runs on this data directory (pid ${run.agentPid}).`);
  }
  lines.push('');
  if (run.findings.length === 0) {
    lines.push('No findings.');
  } else {
    const header = ['FINDING', 'DEVICE/FILE', run.fix ? '--FIX DID' : '--FIX WOULD'];
    const rows = run.findings.map((finding) => [
      finding.severity === 'notice' ? `${finding.kind} (notice)` : finding.kind,
      finding.subject,
      run.fix
        ? didText(findRepair(run.repairs, finding))
        : (finding.fix ?? 'nothing: for a person'),
    ]);
    const widths = [0, 1].map((column) =>
      Math.min(48, Math.max(...[header, ...rows].map((row) => row[column]!.length))),
    );
    const row = (cells: string[]) =>
      cells
        .map((cell, index) => (index < 2 ? cell.padEnd(widths[index]!) : cell))
        .join('  ')
        .trimEnd();
    lines.push(row(header));
    run.findings.forEach((finding, index) => {
      lines.push(row(rows[index]!));
      lines.push(`  ${finding.problem}`);
    });
  }
  if (run.tallies.length > 0) {
    lines.push('');
    for (const tally of run.tallies) lines.push(`${tally.source}: ${tally.count} ${tally.what}`);
  }
  lines.push('');
  lines.push(summary(run));
  return `${lines.join('\n')}\n`;
}

function summary(run: DoctorRun): string {
  const left = run.left.length;
  if (!run.fix) {
    if (left === 0) return 'Healthy.';
    const fixable = run.left.filter((finding) => finding.fix !== undefined).length;
    return `${count(left, 'problem')}: --fix repairs ${fixable}, ${left - fixable} ${left - fixable === 1 ? 'is' : 'are'} for a person.`;
  }
  const fixed = run.repairs.filter((repair) => repair.done).length;
  if (left === 0) return `Healthy: ${count(fixed, 'finding')} fixed.`;
  return `${count(fixed, 'finding')} fixed; ${count(left, 'problem')} left (see above).`;
}

function didText(repair: DoctorRepair | undefined): string {
  if (repair === undefined) return 'nothing: for a person';
  return repair.done ? repair.said : `NOT FIXED: ${repair.said}`;
}

function findRepair(repairs: readonly DoctorRepair[], finding: DoctorFinding) {
  return repairs.find((repair) => sameFinding(repair.finding, finding));
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
