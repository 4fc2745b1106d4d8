// The Mach-O facts the release reads on Linux, from real macOS binaries' headers (testdata/).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readMachO } from './macho.js';
import {
  nodeArm64,
  nodeX64,
  signedPluginX64,
  unsignedPluginX64,
} from './testing/darwin-samples.js';

const folder = mkdtempSync(join(tmpdir(), 'simlock-macho-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const file = (name: string, bytes: Buffer) => {
  const path = join(folder, name);
  writeFileSync(path, bytes);
  return path;
};

describe('readMachO', () => {
  it("reads Node's own Intel binary: amd64, signed, no blob", () => {
    expect(readMachO(file('node-x64', nodeX64()))).toEqual({
      arch: 'amd64',
      signed: true,
      segments: ['__PAGEZERO', '__TEXT', '__DATA_CONST', '__DATA', '__LINKEDIT'],
    });
  });

  it("reads Node's own Apple silicon binary as arm64, signed", () => {
    expect(readMachO(file('node-arm64', nodeArm64()))).toMatchObject({
      arch: 'arm64',
      signed: true,
    });
  });

  it('sees the blob postject injected on Linux, and the signature it dropped', () => {
    expect(readMachO(file('plugin-x64', unsignedPluginX64()))).toEqual({
      arch: 'amd64',
      signed: false,
      segments: ['__PAGEZERO', '__TEXT', '__DATA_CONST', '__DATA', 'NODE_SEA', '__LINKEDIT'],
    });
    expect(readMachO(file('signed-x64', signedPluginX64())).signed).toBe(true);
  });

  it('refuses what is not a 64-bit Mach-O, and load commands cut short', () => {
    const elf = Buffer.concat([Buffer.from('\x7fELF\x02\x01\x01', 'latin1'), Buffer.alloc(57)]);
    expect(() => readMachO(file('linux', elf))).toThrow('is not a 64-bit Mach-O binary');
    expect(() => readMachO(file('cut', nodeX64().subarray(0, 600)))).toThrow(
      'its load commands are cut short',
    );
  });
});
