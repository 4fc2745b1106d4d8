import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../runtime/index.js';
import { FakeClock } from '../test/fake-clock.js';
import { aPlannedSimulator } from '../test/fixtures/driver-devices.js';
import { parseProcessTable } from './device-memory.js';
import { modelRamPath, modelRamWriter, readModelRam } from './model-ram-file.js';
import { DeviceRamSampler, ModelRam, type ModelRamRecord } from './model-ram.js';
import type { PlannedDevice } from './planner.js';

const UDID = '5B1E0C7A-3F2D-4E8B-9C61-2A7D4F0E8B13';

const simulator = (state: PlannedDevice['state'], id = UDID): PlannedDevice =>
  aPlannedSimulator(id, state, { name: 'iPhone 17', model: 'iPhone 17', os: '26.0' });

/** A process table with one simulator using `mb` MiB (launchd_sim 1 MiB, SpringBoard the rest). */
function table(mb: number, udid = UDID) {
  return parseProcessTable(
    [
      `  500     1  1024 /RuntimeRoot/sbin/launchd_sim /set/${udid}/data/var/run/launchd_bootstrap.plist`,
      `  501   500 ${(mb - 1) * 1024} /RuntimeRoot/System/Library/CoreServices/SpringBoard.app/SpringBoard`,
    ].join('\n'),
  );
}

describe('ModelRam', () => {
  it('keeps the running median per model, so one outlier does not move it', () => {
    const models = new ModelRam();
    for (const mb of [2100, 2150, 9000, 2120, 2080]) {
      models.record([{ platform: 'ios', model: 'iPhone 17', mb }]);
    }
    expect(models.measured()).toEqual([
      { platform: 'ios', model: 'iPhone 17', mb: 2120, samples: 5 },
    ]);
  });

  it('keeps the last 15 samples and ignores figures that are not a device', () => {
    const models = new ModelRam();
    for (let index = 0; index < 20; index += 1) {
      models.record([{ platform: 'android', model: 'Pixel 8', mb: 3000 + index }]);
    }
    models.record([
      { platform: 'android', model: 'Pixel 8', mb: 3 },
      { platform: 'android', model: 'Pixel 8', mb: Number.NaN },
      { platform: 'android', model: 'x'.repeat(129), mb: 3000 },
    ]);
    expect(models.measured()).toEqual([
      { platform: 'android', model: 'Pixel 8', mb: 3012, samples: 15 },
    ]);
  });

  it('starts from a kept record, dropping what is out of bounds', () => {
    const changes: ModelRamRecord[] = [];
    const models = new ModelRam(
      { 'ios/iPhone 17': [2000, 1, 2200], 'watchos/Watch': [500], 'ios/': [2000] },
      (record) => changes.push(record),
    );
    expect(models.measured()).toEqual([
      { platform: 'ios', model: 'iPhone 17', mb: 2100, samples: 2 },
    ]);
    models.record([{ platform: 'ios', model: 'iPhone 17', mb: 2300 }]);
    expect(changes).toEqual([{ 'ios/iPhone 17': [2000, 2200, 2300] }]);
  });
});

describe('the model RAM file', () => {
  it('is written after a change and read back by the next agent; a broken one starts afresh', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-model-ram-'));
    try {
      const path = modelRamPath(dir);
      expect(await readModelRam(path, silentLogger)).toEqual({});
      const write = modelRamWriter(path, silentLogger);
      const models = new ModelRam({}, write);
      models.record([{ platform: 'ios', model: 'iPhone 17', mb: 2150 }]);
      await expect
        .poll(async () => readFile(path, 'utf8').catch(() => ''))
        .toBe('{"ios/iPhone 17":[2150]}');
      expect(new ModelRam(await readModelRam(path, silentLogger)).measured()).toEqual([
        { platform: 'ios', model: 'iPhone 17', mb: 2150, samples: 1 },
      ]);
      await writeFile(path, '{"ios/iPhone 17": "lots"}');
      expect(await readModelRam(path, silentLogger)).toEqual({});
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('DeviceRamSampler', () => {
  function sampler(mb: () => number) {
    const clock = new FakeClock();
    const models = new ModelRam();
    let reads = 0;
    const ram = new DeviceRamSampler({
      clock,
      models,
      readProcesses: () => {
        reads += 1;
        return Promise.resolve(table(mb()));
      },
    });
    return { clock, models, ram, reads: () => reads };
  }

  it('reads the table at most once a minute, and only while a virtual device is booted', async () => {
    const { clock, models, ram, reads } = sampler(() => 2048);
    expect(await ram.sample([simulator('shutdown'), simulator('booting', 'other')])).toBe(false);
    expect(reads()).toBe(0);
    expect(await ram.sample([simulator('ready')])).toBe(true);
    expect(await ram.sample([simulator('leased')])).toBe(false);
    expect(reads()).toBe(1);
    await clock.advance(60_000);
    expect(await ram.sample([simulator('leased')])).toBe(true);
    expect(reads()).toBe(2);
    expect(models.measured()).toEqual([
      { platform: 'ios', model: 'iPhone 17', mb: 2048, samples: 2 },
    ]);
  });

  it('records nothing for a booted device whose processes it cannot find', async () => {
    const { models, ram } = sampler(() => 2048);
    expect(await ram.sample([simulator('ready', 'C0FFEE00-1234-4ABC-8DEF-0123456789AB')])).toBe(
      false,
    );
    expect(models.measured()).toEqual([]);
  });
});
