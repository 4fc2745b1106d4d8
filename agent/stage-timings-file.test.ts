import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../runtime/index.js';
import { StageTimings } from './stage-timings.js';
import { readStageTimings, stageTimingsPath, stageTimingsWriter } from './stage-timings-file.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const iphone = { platform: 'ios' as const, model: 'iPhone 16', os: '18.4' };

describe('the stage timings file', () => {
  it('keeps what one agent measured for the next one, in a data dir made on first write', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-timings-'));
    dirs.push(dir);
    const path = stageTimingsPath(join(dir, 'data'));
    expect(await readStageTimings(path, silentLogger)).toEqual({});
    const write = stageTimingsWriter(path, silentLogger);
    const measured = new StageTimings({}, write);
    measured.record('booting', iphone, 21_000);
    measured.record('booting', iphone, 23_000);

    // The writes land in order; the file then holds both measurements.
    await expect
      .poll(async () => JSON.parse(await readFile(path, 'utf8').catch(() => '{}')) as unknown)
      .toEqual({ 'booting/ios/iphone 16/18.4': [21_000, 23_000] });
    const restarted = new StageTimings(await readStageTimings(path, silentLogger));
    expect(restarted.estimate('booting', iphone)).toEqual({
      ms: 22_000,
      basis: 'median of 2 on this host',
    });
  });

  it('starts from the defaults when the file is missing or not what it should be', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-timings-'));
    dirs.push(dir);
    const path = join(dir, 'stage-timings.json');
    expect(await readStageTimings(path, silentLogger)).toEqual({});
    await writeFile(path, '{"booting/ios/x/1": ["soon"]}');
    expect(await readStageTimings(path, silentLogger)).toEqual({});
    await writeFile(path, 'not json');
    expect(await readStageTimings(path, silentLogger)).toEqual({});
  });
});
