// The release's files that docs/INSTALL.md's kind section installs from, built as a release is
// (`npm run release`, tools/release/main.ts): this machine's plugin archive and the krew manifest,
// the packaged chart, and the image saved as an archive (built from the Node 24 base tools/kind
// made, on the host's network as the tests' dockerd resolves no outside name), with SHA256SUMS.
// The page then loads the image into kind from that archive and installs the chart's .tgz.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { hostPlatform } from '../../tools/index.js';
import { must, repositoryRoot, type KindRun } from './kind.js';

export async function buildReleaseFiles(kind: KindRun, folder: string): Promise<void> {
  const platform = hostPlatform();
  if (!platform) throw new Error(`no release platform for ${process.platform}-${process.arch}`);
  const args = [
    ...['--only', 'plugin,chart', '--platforms', platform.node],
    ...['--image', '--node-image', kind.tools.nodeImage, '--host-network'],
    ...['--helm', join(kind.tools.binDir, 'helm'), '--out', folder],
  ];
  const built = await kind.run(join(repositoryRoot, 'tools', 'release.sh'), args, {
    // The machine's own caches (the pinned Node, npm's): not the kind run's HOME.
    env: { HOME: homedir() },
    timeoutMs: 1_200_000,
  });
  must(built, 'tools/release.sh');
}
