// What `simlock-agent doctor` checks of the agent's data directory itself: that it is there and
// writable, whether an agent runs on it (agent.pid), and that the files the agent keeps there
// parse. A record of devices is never removed or moved by the doctor (the devices it names would
// become strangers); the stage timings are only estimates, so an unreadable file is moved aside.
import { constants } from 'node:fs';
import { access, mkdir, rename, rm, stat } from 'node:fs/promises';
import type { Logger } from '../runtime/index.js';
import { pidFilePath, readPidFile, type PidFileState } from './agent-pid.js';
import {
  problem,
  repairStillThere,
  type DoctorFinding,
  type DoctorInspection,
  type DoctorRepair,
} from './drivers/doctor-finding.js';
import { readStageTimings, stageTimingsPath } from './stage-timings-file.js';

export interface DataDirInspection extends DoctorInspection {
  agent: PidFileState;
}

export async function inspectDataDir(dataDir: string): Promise<DataDirInspection> {
  const findings: DoctorFinding[] = [];
  const agent = await readPidFile(dataDir);
  const isDir = await stat(dataDir).then(
    (info) => info.isDirectory(),
    () => undefined,
  );
  if (isDir === undefined) {
    findings.push(
      problem({
        kind: 'agent.data-dir-missing',
        source: 'agent',
        subject: dataDir,
        problem: 'the data directory is not there (nothing made yet, or the config names another)',
        fix: 'make it (the agent also makes it when it starts)',
      }),
    );
    return { findings, tallies: [], agent };
  }
  if (!isDir) {
    findings.push(
      problem({
        kind: 'agent.data-dir-unusable',
        source: 'agent',
        subject: dataDir,
        problem: 'the data directory is a file, not a folder',
      }),
    );
    return { findings, tallies: [], agent };
  }
  const writable = await access(dataDir, constants.W_OK | constants.X_OK).then(
    () => true,
    () => false,
  );
  if (!writable) {
    findings.push(
      problem({
        kind: 'agent.data-dir-unusable',
        source: 'agent',
        subject: dataDir,
        problem: 'the agent cannot write in its data directory: give its user write access',
      }),
    );
  }
  if (agent.state === 'stale') {
    findings.push(
      problem({
        kind: 'agent.stale-pid',
        source: 'agent',
        subject: pidFilePath(dataDir),
        problem: `names ${agent.text ? `process ${agent.text}` : 'no process'}, which does not run: an agent that stopped without cleaning up`,
        fix: 'remove it',
      }),
    );
  }
  if (await timingsUnreadable(dataDir)) {
    findings.push(
      problem({
        kind: 'agent.unreadable-timings',
        source: 'agent',
        subject: stageTimingsPath(dataDir),
        problem: 'the stage timings do not parse: estimates start from the defaults',
        fix: 'move it aside (to stage-timings.json.unreadable)',
      }),
    );
  }
  return { findings, tallies: [], agent };
}

export async function repairDataDir(
  dataDir: string,
  findings: readonly DoctorFinding[],
): Promise<DoctorRepair[]> {
  return repairStillThere(findings, await inspectDataDir(dataDir), async (finding) => {
    switch (finding.kind) {
      case 'agent.data-dir-missing':
        await mkdir(dataDir, { recursive: true });
        return 'made it';
      case 'agent.stale-pid':
        await rm(finding.subject, { force: true });
        return 'removed it';
      case 'agent.unreadable-timings':
        await rename(finding.subject, `${finding.subject}.unreadable`);
        return `moved to ${finding.subject}.unreadable`;
      default:
        throw new Error(`no repair for ${finding.kind}`);
    }
  });
}

async function timingsUnreadable(dataDir: string): Promise<boolean> {
  const path = stageTimingsPath(dataDir);
  const there = await stat(path).then(
    () => true,
    () => false,
  );
  if (!there) return false;
  // The agent's own reader decides: it warns when it cannot use the file.
  let warned = false;
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => {
      warned = true;
    },
    error: () => undefined,
    child: () => log,
  };
  await readStageTimings(path, log);
  return warned;
}
