// The screenshot the fake driver answers `simctl io screenshot -` and `adb exec-out screencap -p`
// with: a real PNG (made here with zlib, no image library), so the console's screenshot path is
// tested byte for byte through the proxy and the agent.
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, checksum]);
}

/** A width × height RGB PNG: a phone screen with a status bar and a coloured body. */
export function fakeScreenPng(
  width = 180,
  height = 360,
  hue: [number, number, number] = [40, 110, 200],
): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3);
    for (let x = 0; x < width; x++) {
      const statusBar = y < height / 16;
      const shade = statusBar ? 0.15 : 0.55 + (0.45 * y) / height;
      row[1 + x * 3] = Math.round(hue[0] * shade);
      row[2 + x * 3] = Math.round(hue[1] * shade);
      row[3 + x * 3] = Math.round(hue[2] * shade);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bits per channel
  header[9] = 2; // truecolour RGB
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The PNG every fake screenshot answers with. */
export const FAKE_SCREENSHOT_PNG = fakeScreenPng();

/** Whether these exec arguments ask for a screenshot written to stdout. */
export function isScreenshotToStdout(tool: string, args: readonly string[]): boolean {
  if (tool === 'simctl')
    return args[0] === 'io' && args.includes('screenshot') && args.at(-1) === '-';
  if (tool === 'adb') return args[0] === 'exec-out' && args[1] === 'screencap';
  return false;
}
