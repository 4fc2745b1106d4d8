// docs/INSTALL.md's kind section, run as a reader runs it: its `sh step=…` blocks, as written, one
// after another in one shell (tools/kind/terminal.ts), from the root of a fresh copy of this
// repository, so that its `npm ci` is the reader's and no step leans on this checkout's
// node_modules or bundles. The shell has the machine's environment and PATH with kind, kubectl and
// helm, and none of this run's Node: step 0 puts Node 24 and the plugin on PATH, as the page says.
// The only things set for it are what the page lets a reader set before step 0 (a cluster name
// and ports of this run, the node image tools/kind built offline, the image's base and the
// build's network flags), and HOME is the run's folder, so that kind writes its kubeconfig there.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir } from 'node:os';
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
  /** The copy of the repository the steps run in. */
  checkout: string;
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

  /** Copies the repository, picks the ports, opens the shell; close() ends it and its jobs. */
  static async start(kind: KindRun): Promise<{ run: DocRun; close: () => Promise<void> }> {
    const checkout = join(kind.dir, 'simlock');
    await copyCheckout(checkout);
    const place: DocRunPlace = {
      terminal: join(kind.dir, 'terminal'),
      checkout,
      agentPort: await freePortRun(6),
      proxyPort: await freePort(),
    };
    const { terminal, close } = await Terminal.open(place.terminal, {
      cwd: checkout,
      env: await readerEnvironment(kind, place),
    });
    return { run: new DocRun(kind, place, terminal), close };
  }

  static attach(kind: KindRun, place: DocRunPlace): DocRun {
    return new DocRun(kind, place, new Terminal(place.terminal));
  }

  /** The CI user of step 5, for the tests' own plugin runs: its kubeconfig, the proxy's URL. */
  get user(): NodeJS.ProcessEnv {
    return {
      KUBECONFIG: join(this.place.checkout, '.simlock', 'try', 'ci.kubeconfig'),
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

/**
 * Tracked and untracked files of this checkout (not the ignored: node_modules, .simlock); outside
 * a git checkout, everything but those.
 */
async function copyCheckout(target: string): Promise<void> {
  await mkdir(target, { recursive: true });
  const copy = (list: string) =>
    spawnSync('bash', ['-c', `set -o pipefail; ${list} | tar -xf - -C "$1"`, 'copy', target], {
      cwd: repositoryRoot,
      encoding: 'utf8',
    });
  let copied = copy(
    'git ls-files -z --cached --others --exclude-standard | tar --null --ignore-failed-read -T - -cf -',
  );
  if (copied.status !== 0) {
    copied = copy('tar --exclude=./node_modules --exclude=./.simlock --exclude=./.git -cf - .');
  }
  if (copied.status !== 0) throw new Error(`copying the checkout failed: ${copied.stderr}`);
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
async function readerEnvironment(kind: KindRun, place: DocRunPlace): Promise<NodeJS.ProcessEnv> {
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
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'simlock');
  const machine = Object.entries(process.env).filter(([name]) => !RUN_ONLY.test(name));
  return {
    ...Object.fromEntries(machine),
    PATH: path.join(delimiter),
    // kind writes its kubeconfig to ~/.kube/config: this run's, as is helm's ~/.config.
    HOME: kind.dir,
    TMPDIR: kind.dir,
    // The reader's npm and Node caches stay theirs.
    npm_config_cache: join(homedir(), '.npm'),
    npm_config_userconfig: join(homedir(), '.npmrc'),
    SIMLOCK_CACHE: process.env.SIMLOCK_CACHE ?? cache,
    KIND_EXPERIMENTAL_DOCKER_NETWORK: kind.network,
    // What the page's step 0 lets a reader set.
    CLUSTER: kind.name,
    KIND_NODE_IMAGE: kind.tools.kindNodeImage,
    NODE_IMAGE: kind.tools.nodeImage,
    DOCKER_BUILD_FLAGS: (await kind.dockerBuildFlags()).join(' '),
    AGENT_PORT: String(place.agentPort),
    PROXY_PORT: String(place.proxyPort),
  };
}
