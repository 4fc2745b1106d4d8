// One kind cluster for the kind tier, and the tests' own commands against it (docs/INSTALL.md's
// steps run in a shell of their own: doc-run.ts): kind, docker, kubectl (with the plugin on PATH)
// and helm, each with an environment of this run only (its kubeconfig, its helm folders, its own
// Docker network), so nothing of the developer's ~/.kube or ~/.config/helm is read or written, and
// all of it is removed at the end. Every command and its output go to the run's transcript.
import { randomBytes } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../runtime/index.js';
import { runCommand, type CommandResult } from '../../test/cluster/harness.js';
import type { KindTools } from './global-setup.js';
import { forgetOwner, noteOwner, removeRun, sweepStaleRuns } from './stale-runs.js';

export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  /** false: leave it out of the transcript (polls). */
  record?: boolean;
}

/** Tokens and certificate data out of the transcript, and no line longer than a screen. */
export function redact(text: string): string {
  return text
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<token>')
    .split('\n')
    .map((line) => (line.length > 200 ? `${line.slice(0, 200)}…` : line))
    .join('\n');
}

/** The image, as docs/INSTALL.md names it. */
export const IMAGE = 'simlock:0.1.0';

export type ReadyKindTools = Extract<KindTools, { ready: true }>;

/** Throws with the command's output unless it exited 0; answers its stdout. */
export function must(result: CommandResult, what: string): string {
  if (result.exitCode !== 0) {
    throw new Error(
      `${what} exited ${result.exitCode}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** Where a KindRun keeps its things: enough for another process to take it over (attach). */
export interface KindRunPlace {
  /** The cluster's name: unique, as other runs may share this Docker engine. */
  name: string;
  /** This run's folder: its kubeconfig, HOME, TMPDIR and helm folders. */
  dir: string;
  /** The file that gets every command and its output. */
  transcript: string;
}

export class KindRun {
  readonly name: string;
  readonly dir: string;
  readonly transcript: string;
  /** kind's Docker network for this run (KIND_EXPERIMENTAL_DOCKER_NETWORK), removed at the end. */
  readonly network: string;
  readonly kubeconfig: string;
  /** cleanup() deletes the cluster of this run's name (the kind global setup's run does). */
  ownsCluster = false;

  private constructor(
    readonly tools: ReadyKindTools,
    place: KindRunPlace,
  ) {
    ({ name: this.name, dir: this.dir, transcript: this.transcript } = place);
    this.network = `${this.name}-net`;
    // Where kind writes it for a reader whose HOME is this run's folder (the doc's shell).
    this.kubeconfig = join(this.dir, '.kube', 'config');
  }

  /** `transcript`: the file in .simlock/ that gets every command and its output. */
  static async start(tools: ReadyKindTools, transcript: string): Promise<KindRun> {
    const path = join(repositoryRoot, '.simlock', transcript);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, '');
    const run = new KindRun(tools, {
      name: `simlock-e2e-${randomBytes(3).toString('hex')}`,
      dir: await mkdtemp(join(tmpdir(), 'simlock-kind-')),
      transcript: path,
    });
    const removed = await sweepStaleRuns((command, args) =>
      run.run(command, args, { record: false }),
    );
    if (removed.length > 0)
      console.log(
        `kind tier: removed the clusters of runs that ended without their teardown: ${removed.join(', ')}`,
      );
    await noteOwner(run.name);
    return run;
  }

  /** The run another process started (the kind global setup), to go on with; it cleans up. */
  static attach(tools: ReadyKindTools, place: KindRunPlace): KindRun {
    return new KindRun(tools, place);
  }

  get place(): KindRunPlace {
    return { name: this.name, dir: this.dir, transcript: this.transcript };
  }

  environment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    const path = [
      this.tools.binDir,
      join(repositoryRoot, 'bin'),
      dirname(this.tools.kind),
      dirname(process.execPath),
      process.env.PATH ?? '/usr/bin:/bin',
    ].join(':');
    return {
      PATH: path,
      HOME: this.dir,
      TMPDIR: this.dir,
      KUBECONFIG: this.kubeconfig,
      KIND_EXPERIMENTAL_DOCKER_NETWORK: this.network,
      HELM_CACHE_HOME: join(this.dir, 'helm', 'cache'),
      HELM_CONFIG_HOME: join(this.dir, 'helm', 'config'),
      HELM_DATA_HOME: join(this.dir, 'helm', 'data'),
      SIMLOCK_LOG_LEVEL: 'warn',
      ...extra,
    };
  }

  /**
   * Runs a command of the docs, from the repository's root, with this run's environment; the
   * command and its output go to the transcript (what docs/INSTALL.md shows).
   */
  async run(command: string, args: string[], options: RunOptions = {}): Promise<CommandResult> {
    const result = await runCommand(command, args, {
      env: this.environment(options.env),
      ...(options.input !== undefined ? { input: options.input } : {}),
      timeoutMs: options.timeoutMs ?? 120_000,
      cwd: repositoryRoot,
    });
    if (options.record === false) return result;
    const shown = args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ');
    await appendFile(
      this.transcript,
      redact(
        `$ ${command} ${shown}\n${result.stdout}${result.stderr}${result.exitCode ? `(exit ${result.exitCode})\n` : ''}\n`,
      ),
    );
    return result;
  }

  /** Adds `text` to the transcript, redacted. */
  async record(text: string): Promise<void> {
    await appendFile(this.transcript, redact(text));
  }

  /** A client of the cluster's admin (kind's kubeconfig), for the tests' own watches. */
  admin(): KubeClient {
    return KubeClient.fromOptions({ kubeconfig: this.kubeconfig });
  }

  kubectl(args: string[], options: RunOptions = {}) {
    return this.run('kubectl', args, options);
  }

  /**
   * The flags `docker build` needs here: containers of the dockerd tools/kind starts resolve no
   * outside name, so the build's npm is given its registry's address, as this machine resolves it.
   */
  async dockerBuildFlags(): Promise<string[]> {
    const registry = new URL(
      must(await this.run('npm', ['config', 'get', 'registry']), 'npm config get registry').trim(),
    ).hostname;
    const { address } = await lookup(registry, { family: 4 });
    return ['--network', 'host', '--add-host', `${registry}:${address}`];
  }

  /** `docker build -t simlock:0.1.0 .`, from the Node 24 base tools/kind made. */
  async buildImage(): Promise<void> {
    const args = ['build', ...(await this.dockerBuildFlags())];
    args.push('--build-arg', `NODE_IMAGE=${this.tools.nodeImage}`, '-t', IMAGE, '.');
    must(await this.run('docker', args, { timeoutMs: 900_000 }), 'docker build');
  }

  /** The node's systemd journal of containerd and kubelet, for failures that happen in it. */
  async nodeLogs(): Promise<string> {
    const node = `${this.name}-control-plane`;
    const journal = await this.run('docker', [
      'exec',
      node,
      'journalctl',
      '--no-pager',
      '-n',
      '80',
      '-u',
      'kubelet',
      '-u',
      'containerd',
    ]);
    return `${journal.stdout}${journal.stderr}`;
  }

  /** Deletes the cluster and what was made for it (removeRun), when this run owns it; its files. */
  async cleanup(): Promise<void> {
    if (this.ownsCluster) await removeRun((command, args) => this.run(command, args), this.name);
    else await forgetOwner(this.name);
    await rm(this.dir, { recursive: true, force: true });
  }
}
