// What tools/test.sh says of the kind tier in the suite's last line: `ran` only once the install
// test's steps have begun (a run that stopped before them, a configuration error or a failed
// cluster tier, did not run it), else why not.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const statusFile = fileURLToPath(new URL('../../.simlock/kind-tier-status', import.meta.url));

async function write(line: string): Promise<void> {
  await mkdir(dirname(statusFile), { recursive: true });
  await writeFile(statusFile, `${line}\n`);
}

/** The kind global setup's word: why the tier cannot run, or that it has not begun yet. */
export const tierCannotRun = (why: string) => write(`did not run: ${why}`);
export const tierNotBegun = () =>
  write("did not run: the run ended before the kind tier's tests began");

/** The install test's steps begin. */
export const tierRan = () => write('ran');
