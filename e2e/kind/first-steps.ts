// The install test's first step: the release's files built (the plugin, the chart, the image with
// docker build), then docs/INSTALL.md's steps 0 and 1 (the plugin on PATH, kind create cluster,
// kind load image-archive). Minutes of waiting on docker and kubeadm: the test runs first in the
// group it shares with the cluster tier (test/kind-first-sequencer.ts), beside its files.
import type { DocRun } from './doc-run.js';
import { buildReleaseFiles } from './release-files.js';

/** The release's files, then docs/INSTALL.md's steps 0 and 1, and what they print. */
export async function prepareCluster(run: DocRun): Promise<void> {
  await buildReleaseFiles(run.kind, run.place.release);
  await run.step('setup', {
    timeoutMs: 120_000,
    shows: [
      // Each file of the release checked against SHA256SUMS; the plugin found by kubectl.
      /^kubectl-simlock-\w+-\w+\.tar\.gz: OK$/,
      'simlock-0.1.0.tgz: OK',
      'simlock-image-0.1.0.tar: OK',
      'simlock.yaml: OK',
      /^\/\S+\/simlock-try\/bin\/kubectl-simlock$/,
    ],
  });
  try {
    await run.step('cluster', {
      timeoutMs: 1_200_000,
      shows: [/^Set kubectl context to "kind-[\w-]+"$/, 'Loaded image: simlock:0.1.0'],
    });
  } catch (error) {
    // What kubeadm, kubelet and containerd said, when the node did not come up.
    throw new Error(
      `${(error as Error).message}\n--- the node's journal\n${await run.kind.nodeLogs()}`,
    );
  }
}
