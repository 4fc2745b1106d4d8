// docs/INSTALL.md's kind section, run as a reader runs it: its `sh step=…` blocks, as written, one
// after another in one shell (tools/kind/terminal.ts), in an empty folder, from a release's files
// (release-files.ts builds them first, as a reader downloads them): no step leans on this
// checkout. The shell has the machine's environment and PATH with kind, kubectl and helm, and none
// of this run's Node: the plugin of step 0 is the release's single binary. The only things set for
// it are what the page lets a reader set before step 0 (the release's folder, a cluster name and
// ports of this run, the node image tools/kind built offline), and HOME is the run's folder, so
// that kind writes its kubeconfig there.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { docSteps, missingLines, type ExpectedLine } from '../../tools/kind/doc-steps.js';
import { Terminal } from '../../tools/kind/terminal.js';
import { freePort } from '../../tools/controlplane/start.js';
import { repositoryRoot, type KindRun } from './kind.js';

/** The page's steps, read once. */
export const INSTALL_STEPS = docSteps(
  readFileSync(join(repositoryRoot, 'docs', 'INSTALL.md'), 'utf8'),
);

/** Enough for another process to go on with the run (the global setup starts it). */
export interface DocRunPlace {
  /** The terminal's folder. */
  terminal: string;
  /** The folder the steps run in (the page's $PWD). */
  cwd: string;
  /** The release's files (the page's $RELEASE). */
  release: string;
  agentPort: number;
  proxyPort: number;
}

export interface StepOptions {
  timeoutMs: number;
  /** Lines the run must print, each also in what the page shows for the step. */
  shows?: readonly ExpectedLine[];
}

export class DocRun {
  private constructor(
    readonly kind: KindRun,
    readonly place: DocRunPlace,
    private readonly terminal: Terminal,
  ) {}

  /** Picks the folders and the ports, opens the shell; close() ends it and its jobs. */
  static async start(kind: KindRun): Promise<{ run: DocRun; close: () => Promise<void> }> {
    const cwd = join(kind.dir, 'try');
    await mkdir(cwd, { recursive: true });
    const place: DocRunPlace = {
      terminal: join(kind.dir, 'terminal'),
      cwd,
      release: join(kind.dir, 'release'),
      agentPort: await freePortRun(6),
      proxyPort: await freePort(),
    };
    const { terminal, close } = await Terminal.open(place.terminal, {
      cwd,
      env: readerEnvironment(kind, place),
    });
    return { run: new DocRun(kind, place, terminal), close };
  }

  static attach(kind: KindRun, place: DocRunPlace): DocRun {
    return new DocRun(kind, place, new Terminal(place.terminal));
  }

  /** The CI user of step 5, for the tests' own plugin runs: its kubeconfig, the proxy's URL. */
  get user(): NodeJS.ProcessEnv {
    return {
      KUBECONFIG: join(this.place.cwd, 'simlock-try', 'ci.kubeconfig'),
      SIMLOCK_PROXY_URL: `http://127.0.0.1:${this.place.proxyPort}`,
    };
  }

  /**
   * Runs the page's step `id`; answers its output. Throws when a command of it failed, or a line
   * of `shows` is missing from the output or from the page's output for the step.
   */
  async step(id: string, options: StepOptions): Promise<string> {
    const step = INSTALL_STEPS.find((candidate) => candidate.id === id);
    if (!step) throw new Error(`docs/INSTALL.md has no step ${id}`);
    await this.kind.record(`### docs/INSTALL.md, step ${id}\n${step.commands}\n`);
    let result;
    const started = Date.now();
    try {
      result = await this.terminal.run(id, step.commands, options.timeoutMs);
    } catch (error) {
      await this.kind.record(`${(error as Error).message}\n\n`);
      throw error;
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    await this.kind.record(`--- output (${seconds} s)\n${result.output}\n`);
    const problems: string[] = [];
    if (result.failures.length > 0) problems.push(`commands failed: ${result.failures.join('; ')}`);
    const unseen = missingLines(result.output, options.shows ?? []);
    if (unseen.length > 0) problems.push(`not printed: ${unseen.map(String).join(' | ')}`);
    const unshown = missingLines(step.shown ?? '', options.shows ?? []);
    if (unshown.length > 0) {
      problems.push(
        `printed, but docs/INSTALL.md does not show: ${unshown.map(String).join(' | ')}`,
      );
    }
    if (problems.length > 0) {
      throw new Error(`step ${id}: ${problems.join('\n')}\n--- its output\n${result.output}`);
    }
    return result.output;
  }
}

/** A port with the `count - 1` after it free too (the agents' exec and local ports). */
async function freePortRun(count: number): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = await freePort();
    const free = await Promise.all(
      Array.from({ length: count }, (_, offset) => canListen(base + offset)),
    );
    if (free.every(Boolean)) return base;
  }
  throw new Error(`no ${count} free ports in a row`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

/**
 * What this run's own tools put in the environment (npx's npm_*, vitest's, Node's options, the
 * tests' kubeconfig and log level): a reader's shell has none of it.
 */
const RUN_ONLY =
  /^(npm_|VITEST|TINYPOOL|NODE_OPTIONS$|NODE_ENV$|TEST$|INIT_CWD$|KUBECONFIG$|SIMLOCK_|HELM_|KIND_|FORCE_COLOR$|NO_COLOR$)/;

/**
 * A reader's shell: this machine's environment (its CA certificates, proxies, locale) and PATH,
 * without this run's Node and variables, with kind, kubectl and helm on PATH and the page's
 * settings.
 */
function readerEnvironment(kind: KindRun, place: DocRunPlace): NodeJS.ProcessEnv {
  const ours = (entry: string) =>
    entry.startsWith(repositoryRoot) ||
    entry.includes('/simlock/node/') ||
    entry === dirname(process.execPath) ||
    entry.endsWith('node_modules/.bin');
  const path = [
    kind.tools.binDir,
    dirname(kind.tools.kind),
    ...(process.env.PATH ?? '/usr/bin:/bin').split(delimiter).filter((entry) => !ours(entry)),
  ];
  const machine = Object.entries(process.env).filter(([name]) => !RUN_ONLY.test(name));
  return {
    ...Object.fromEntries(machine),
    PATH: path.join(delimiter),
    // kind writes its kubeconfig to ~/.kube/config: this run's, as is helm's ~/.config.
    HOME: kind.dir,
    TMPDIR: kind.dir,
    KIND_EXPERIMENTAL_DOCKER_NETWORK: kind.network,
    // What the page's step 0 lets a reader set.
    RELEASE: place.release,
    CLUSTER: kind.name,
    KIND_NODE_IMAGE: kind.tools.kindNodeImage,
    AGENT_PORT: String(place.agentPort),
    PROXY_PORT: String(place.proxyPort),
  };
}
