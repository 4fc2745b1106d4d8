import { describe, expect, it } from 'vitest';
import { flagValueCompletions, runCli } from './app.js';
import { RecordingIO } from './io.js';

describe('shell completion of flag values', () => {
  it.each([
    [
      ['lease', '--platform', ''],
      ['ios', 'android'],
    ],
    [['lease', '--platform', 'a'], ['android']],
    [
      ['lease', '--class', ''],
      ['phone', 'tablet'],
    ],
    [['list', '-o', 'y'], ['yaml']],
    [
      ['list', '--output', ''],
      ['json', 'yaml', 'wide', 'name'],
    ],
    [['lease', '--platform=i'], ['--platform=ios']],
  ])('after %j offers %j', (words, values) => {
    expect(flagValueCompletions(words)).toEqual(values);
  });

  it('leaves everything else to yargs', () => {
    expect(flagValueCompletions(['lease', '--device', ''])).toBeUndefined();
    expect(flagValueCompletions(['worker', ''])).toBeUndefined();
    expect(flagValueCompletions([''])).toBeUndefined();
  });
});

describe('help', () => {
  it('exits 0', async () => {
    const io = new RecordingIO();
    expect(await runCli(['lease', '--help'], io)).toBe(0);
    expect(io.stderr).toEqual([]);
  });
});
