// --official-node takes nodejs.org's Node only when it runs here as the pinned version: a Node of
// another version or platform would make a blob the binary cannot run (Node's rule for blobs).
// The Node folders are stand-ins: a bin/node script that answers as a Node would, and a LICENSE.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { officialNodeBinary, pinnedNodeVersion } from './node-binary.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'simlock-official-node-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const here = `${process.platform}-${process.arch}`;

/** An unpacked Node whose bin/node answers `-p 'process.version …'` with `answer`. */
function unpackedNode(name: string, answer: string, license = true): string {
  const folder = join(scratch, name);
  mkdirSync(join(folder, 'bin'), { recursive: true });
  writeFileSync(join(folder, 'bin', 'node'), `#!/bin/sh\necho '${answer}'\n`);
  chmodSync(join(folder, 'bin', 'node'), 0o755);
  if (license) writeFileSync(join(folder, 'LICENSE'), 'Node.js license\n');
  return folder;
}

describe('officialNodeBinary', () => {
  const pinned = `v${pinnedNodeVersion(root)}`;

  it("takes the pinned Node for this machine, as this machine's platform", () => {
    const folder = unpackedNode('pinned', `${pinned} ${here}`);
    const { node, platform } = officialNodeBinary(root, folder);
    expect(node).toBe(join(folder, 'bin', 'node'));
    expect(platform.node).toBe(here);
  });

  it('refuses another version or platform, naming what it is and what is needed', () => {
    expect(() => officialNodeBinary(root, unpackedNode('old', `v24.18.1 ${here}`))).toThrow(
      `is Node v24.18.1 for ${here}; the release needs ${pinned} (tools/node-versions.env)`,
    );
    expect(() => officialNodeBinary(root, unpackedNode('other', `${pinned} aix-ppc64`))).toThrow(
      `is Node ${pinned} for aix-ppc64`,
    );
  });

  it('refuses a folder that is not an unpacked Node', () => {
    expect(() =>
      officialNodeBinary(root, unpackedNode('bare', `${pinned} ${here}`, false)),
    ).toThrow('has no bin/node and LICENSE');
  });
});
