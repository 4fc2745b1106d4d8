import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { deviceResidentMb, parseProcessTable, readProcessTable } from './device-memory.js';
import { createCommandRunner } from './drivers/command.js';

const recorded = (name: string) =>
  readFileSync(new URL(`./testdata/${name}`, import.meta.url), 'utf8');

const OWN_SIM = '5B1E0C7A-3F2D-4E8B-9C61-2A7D4F0E8B13';
const DEFAULT_SET_SIM = 'C0FFEE00-1234-4ABC-8DEF-0123456789AB';

describe('parseProcessTable', () => {
  it('reads every row of the macOS output, command lines with spaces whole', () => {
    const rows = parseProcessTable(recorded('ps-macos.txt'));
    expect(rows).toHaveLength(20);
    expect(rows[4]).toMatchObject({ pid: 4100, ppid: 812, rssKiB: 9120 });
    expect(rows[4]!.command).toContain('iOS 18.4.simruntime/Contents/Resources/RuntimeRoot/sbin/');
    expect(rows.at(-1)).toEqual({ pid: 6999, ppid: 402, rssKiB: 0, command: '(mdworker_shared)' });
  });

  it('reads the Linux procps output, kernel threads included', () => {
    const rows = parseProcessTable(recorded('ps-linux-procps.txt'));
    expect(rows).toHaveLength(12);
    expect(rows[1]).toEqual({ pid: 2, ppid: 0, rssKiB: 0, command: '[kthreadd]' });
  });

  it('skips lines that do not parse or are out of bounds, and keeps the rest', () => {
    const rows = parseProcessTable(
      [
        '  PID  PPID    RSS COMMAND',
        '',
        'garbage',
        '   12     1  -40 negative',
        '   13     1 99999999999999 too big',
        ' 99999999999     1  10 pid too big',
        '   14     1  2048 /bin/ok --flag',
        '   15     1  1024',
      ].join('\n'),
    );
    expect(rows).toEqual([{ pid: 14, ppid: 1, rssKiB: 2048, command: '/bin/ok --flag' }]);
  });

  it('bounds a very long command line instead of failing', () => {
    const rows = parseProcessTable(`   7     1  100 /bin/x ${'a'.repeat(100_000)}\n`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.command.length).toBeLessThanOrEqual(8192);
  });
});

describe('deviceResidentMb', () => {
  const mac = parseProcessTable(recorded('ps-macos.txt'));
  const linux = parseProcessTable(recorded('ps-linux-procps.txt'));

  it('sums a simulator: its launchd_sim and every process under it, in MiB', () => {
    // 9120 + 412880 + 163420 + 51206 + 38950 + 201334 + 622104 + 22010 KiB (an app and its child).
    expect(deviceResidentMb(mac, { id: OWN_SIM, platform: 'ios' })).toBe(1485);
    expect(deviceResidentMb(mac, { id: DEFAULT_SET_SIM, platform: 'ios' })).toBe(545);
    // The UDID in any case.
    expect(deviceResidentMb(mac, { id: OWN_SIM.toLowerCase(), platform: 'ios' })).toBe(1485);
  });

  it('does not count a process that names the UDID outside the simulator (simctl spawn)', () => {
    const spawn = mac.find((row) => row.pid === 4180)!;
    expect(spawn.command).toContain(OWN_SIM);
    expect(deviceResidentMb([spawn], { id: OWN_SIM, platform: 'ios' })).toBeUndefined();
  });

  it('sums an emulator: launcher, qemu and their children, each process once', () => {
    // 24576 + 2890112 + 16384 + 4096 KiB: the launcher and its qemu child both match.
    expect(deviceResidentMb(linux, { id: 'Pixel_8_API_35', platform: 'android' })).toBe(2866);
    // A name that extends another is its own device; a grep for the name is not an emulator.
    expect(deviceResidentMb(linux, { id: 'Pixel_8_API_35_2', platform: 'android' })).toBe(3030);
    expect(deviceResidentMb(mac, { id: 'Pixel_8_API_35', platform: 'android' })).toBe(2905);
  });

  it('finds nothing for a device that is not running, or an id of the wrong shape', () => {
    expect(deviceResidentMb(linux, { id: 'Pixel_9', platform: 'android' })).toBeUndefined();
    expect(deviceResidentMb(mac, { id: 'not-a-udid', platform: 'ios' })).toBeUndefined();
    expect(deviceResidentMb(mac, { id: 'Pixel 8 API 35', platform: 'android' })).toBeUndefined();
  });

  it('survives a table whose parent links loop', () => {
    const rows = parseProcessTable(
      [
        ' 10   11  1024 /sdk/emulator/emulator -avd Loop',
        ' 11   10  1024 /bin/child',
        ' 12   12  1024 /bin/own-parent',
      ].join('\n'),
    );
    expect(deviceResidentMb(rows, { id: 'Loop', platform: 'android' })).toBe(2);
  });
});

describe('readProcessTable', () => {
  it('runs ps as argv, no shell, and parses its output (a stand-in ps on PATH)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'simlock-ps-'));
    try {
      const output = fileURLToPath(new URL('./testdata/ps-linux-procps.txt', import.meta.url));
      await writeFile(
        join(dir, 'ps'),
        [
          '#!/bin/sh',
          '[ "$*" = "-ww -ax -o pid=,ppid=,rss=,command=" ] || { echo "ps: unexpected $*" >&2; exit 1; }',
          `while IFS= read -r line; do printf '%s\\n' "$line"; done < '${output}'`,
        ].join('\n'),
        { mode: 0o755 },
      );
      const rows = await readProcessTable(createCommandRunner({ env: { PATH: dir } }));
      expect(rows).toEqual(parseProcessTable(recorded('ps-linux-procps.txt')));
      expect(rows).toHaveLength(12);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('fails when ps fails', async () => {
    await expect(
      readProcessTable(() =>
        Promise.resolve({ exitCode: 1, stdout: '', stderr: 'ps: bad option\n' }),
      ),
    ).rejects.toThrow('ps exited with 1: ps: bad option');
  });
});
