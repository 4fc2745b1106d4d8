// Set-up of the kind tier: tools/kind/build.sh makes sure a Docker engine answers, and builds kind
// and its node image (cached; cold, many minutes). Where that cannot be done, the tier's tests are
// skipped with the reason, and tools/test.sh prints it in the final summary: never a silent pass.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { DocRun, type DocRunPlace } from './doc-run.js';
import { KindRun, type KindRunPlace } from './kind.js';
import { tierCannotRun, tierNotBegun } from './tier-status.js';

export type KindTools =
  | {
      ready: true;
      /** The kind binary, built from its pinned Go module. */
      kind: string;
      /** The node image for `kind create cluster --image`. */
      kindNodeImage: string;
      /** The Node 24 base for the Dockerfile's NODE_IMAGE build argument. */
      nodeImage: string;
      /** kubectl and helm (tools/controlplane). */
      binDir: string;
    }
  | { ready: false; missing: string };

declare module 'vitest' {
  export interface ProvidedContext {
    kindTools: KindTools;
    /** The install test's kind run and the shell of docs/INSTALL.md's steps. */
    kindInstallRun: { kind: KindRunPlace; doc: DocRunPlace } | null;
  }
}

/** The install test's run and its shell, ended at teardown. */
let installRun: { kind: KindRun; doc: DocRun; close: () => Promise<void> } | undefined;

const buildScript = fileURLToPath(new URL('../../tools/kind/build.sh', import.meta.url));

/** Runs build.sh, its progress on our stderr: its KEY=VALUE lines, what is missing, or a failure. */
function build(): Promise<
  { values: Map<string, string> } | { missing: string } | { broken: string }
> {
  return new Promise((resolve) => {
    const child = spawn(buildScript, [], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-20_000);
      process.stderr.write(chunk);
    });
    child.on('error', (error) => resolve({ missing: `${buildScript}: ${error.message}` }));
    child.on('exit', (code) => {
      if (code === 0) {
        const values = new Map(
          stdout
            .split('\n')
            .filter((line) => line.includes('='))
            .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
        );
        return resolve({ values });
      }
      const lines = stderr.trimEnd().split('\n');
      const named = lines.filter((line) => line.includes('MISSING: ')).at(-1);
      // Exit 3 is "cannot be had here": the tier is skipped. Anything else is a broken build.
      if (code === 3 && named)
        return resolve({ missing: named.slice(named.indexOf('MISSING: ') + 9) });
      resolve({
        broken: `tools/kind/build.sh failed (exit ${code}):\n${lines.slice(-20).join('\n')}`,
      });
    });
  });
}

export async function setup(project: TestProject): Promise<void> {
  const started = Date.now();
  const result = await build();
  if ('broken' in result) throw new Error(result.broken);
  let tools: KindTools;
  if ('missing' in result) {
    tools = { ready: false, missing: result.missing };
    console.error(`\nkind tier WILL NOT RUN: ${result.missing}\n`);
  } else {
    const value = (key: string): string => {
      const found = result.values.get(key);
      if (!found) throw new Error(`tools/kind/build.sh printed no ${key}`);
      return found;
    };
    tools = {
      ready: true,
      kind: value('KIND'),
      kindNodeImage: value('KIND_NODE_IMAGE'),
      nodeImage: value('NODE_IMAGE'),
      binDir: value('CONTROLPLANE_BIN'),
    };
    console.log(`kind tier: tools ready in ${Date.now() - started} ms (${tools.kindNodeImage})`);
  }
  await (tools.ready ? tierNotBegun() : tierCannotRun(tools.missing));
  project.provide('kindTools', tools);
  if (tools.ready) {
    const kind = await KindRun.start(tools, 'kind-install.log');
    // The doc's steps, in the install test's worker, make the cluster: it goes at teardown.
    kind.ownsCluster = true;
    const { run: doc, close } = await DocRun.start(kind);
    installRun = { kind, doc, close };
  }
  project.provide(
    'kindInstallRun',
    installRun ? { kind: installRun.kind.place, doc: installRun.doc.place } : null,
  );
}

/** The doc's shell ends with its jobs (agents, a port-forward); the cluster goes if the test left it. */
export async function teardown(): Promise<void> {
  if (!installRun) return;
  await installRun.close();
  await installRun.kind.cleanup();
}
