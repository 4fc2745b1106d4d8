// The peers' binaries, built from the pinned Go modules of tools/peers into the cache outside the
// repository (tools/peers/build.sh; cold: minutes, then nothing).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const buildScript = fileURLToPath(new URL('../../tools/peers/build.sh', import.meta.url));
const folders = new Map<string, Promise<string>>();

/** The peer's folder in the cache (bin/ inside; stages/ for kwok, crds/ for kueue). */
export function peerFolder(peer: 'kwok' | 'kueue'): Promise<string> {
  let folder = folders.get(peer);
  if (!folder) {
    folder = promisify(execFile)(buildScript, [peer], {
      maxBuffer: 1 << 20,
      timeout: 60 * 60 * 1000,
    }).then(({ stdout }) => stdout.trim().split('\n').at(-1) ?? '');
    folders.set(peer, folder);
  }
  return folder;
}
