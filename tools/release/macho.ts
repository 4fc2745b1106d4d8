// What a Linux machine can tell about a macOS binary without Apple's tools, from its Mach-O header
// and load commands: its CPU, whether it carries a code signature (the LC_CODE_SIGNATURE that
// `codesign --sign -` adds and postject's injection removes), and its segments (NODE_SEA is the
// one postject adds with the single executable's blob). Whether that signature is valid is not
// checked here: `codesign --verify` on the Mac that signed it does that.
import { closeSync, openSync, readSync } from 'node:fs';

/** The 64-bit little-endian Mach-O magic (MH_MAGIC_64), as every macOS binary of Node has. */
const MH_MAGIC_64 = 0xfeedfacf;
const CPU_TYPE_X86_64 = 0x01000007;
const CPU_TYPE_ARM64 = 0x0100000c;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const HEADER_BYTES = 32;

export interface MachO {
  /** krew's (Go's) name of its CPU, or the raw cputype when it is neither of the release's. */
  arch: 'amd64' | 'arm64' | `cputype 0x${string}`;
  /** It has a LC_CODE_SIGNATURE load command. */
  signed: boolean;
  /** The names of its LC_SEGMENT_64 segments, in order. */
  segments: string[];
}

/** The facts of `file`'s Mach-O header; throws when it is not a thin 64-bit Mach-O. */
export function readMachO(file: string): MachO {
  const fd = openSync(file, 'r');
  try {
    const header = read(fd, 0, HEADER_BYTES);
    if (header.length < HEADER_BYTES || header.readUInt32LE(0) !== MH_MAGIC_64) {
      throw new Error(`${file} is not a 64-bit Mach-O binary (a macOS executable)`);
    }
    const cputype = header.readUInt32LE(4);
    const commandCount = header.readUInt32LE(16);
    const commandBytes = header.readUInt32LE(20);
    const commands = read(fd, HEADER_BYTES, commandBytes);
    let signed = false;
    const segments: string[] = [];
    let offset = 0;
    for (let index = 0; index < commandCount; index++) {
      if (offset + 8 > commands.length) throw new Error(`${file}: its load commands are cut short`);
      const command = commands.readUInt32LE(offset);
      const size = commands.readUInt32LE(offset + 4);
      if (size < 8) throw new Error(`${file}: a load command of ${size} bytes`);
      if (command === LC_CODE_SIGNATURE) signed = true;
      if (command === LC_SEGMENT_64) {
        segments.push(
          commands
            .subarray(offset + 8, offset + 24)
            .toString('latin1')
            .replace(/\0+$/, ''),
        );
      }
      offset += size;
    }
    return { arch: archOf(cputype), signed, segments };
  } finally {
    closeSync(fd);
  }
}

function archOf(cputype: number): MachO['arch'] {
  if (cputype === CPU_TYPE_X86_64) return 'amd64';
  if (cputype === CPU_TYPE_ARM64) return 'arm64';
  return `cputype 0x${cputype.toString(16)}`;
}

function read(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const count = readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, count);
}
