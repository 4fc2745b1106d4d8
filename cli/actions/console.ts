// `kubectl simlock console`: runs the console's server (console/main.ts, by bin/launch.mjs) as a
// child process with this kubeconfig, context and -n, prints its URL and opens the browser. The
// plugin does not import the console (components stay apart, ADR 0006): it starts the program
// beside it, as a person would, and stops it on Ctrl-C.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { isSea } from 'node:sea';
import { z } from 'zod';
import { SimlockError } from '../../api/index.js';
import { packageRoot } from '../../runtime/index.js';
import { parseFlags, parseGlobals, rejectOutput } from '../flags.js';
import type { CliIO } from '../io.js';

const ConsoleFlags = z.object({
  port: z.number().int().min(0).max(65535).default(0),
  noOpen: z.boolean().default(false),
  proxyUrl: z.url({ protocol: /^https?$/ }).optional(),
});

/** The desktop's way to open a URL, if it has one. */
function opener(): string | undefined {
  if (process.platform === 'darwin') return 'open';
  if (process.platform === 'win32') return undefined;
  return 'xdg-open';
}

export async function consoleAction(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, [], 'console');
  const flags = parseFlags(ConsoleFlags, argv, {
    port: '--port',
    noOpen: '--no-open',
    proxyUrl: '--proxy-url',
  });
  // The release's single binary (docs/INSTALL.md) holds the plugin alone: the console's server
  // and its page are files of the npm package, which the binary does not carry.
  if (isSea()) {
    throw new SimlockError(
      'UNAVAILABLE',
      'the console is not part of the single kubectl-simlock binary: install simlock from npm (docs/INSTALL.md) for `kubectl simlock console`, or open the console served in the cluster',
    );
  }
  const launcher = join(packageRoot(import.meta.url), 'bin', 'launch.mjs');
  const child = spawn(
    process.execPath,
    [
      launcher,
      'console',
      '--mode',
      'local',
      '--port',
      String(flags.port),
      '--simlock-namespace',
      globals.simlockNamespace,
      ...(globals.kubeconfig ? ['--kubeconfig', globals.kubeconfig] : []),
      ...(globals.context ? ['--context', globals.context] : []),
      // -n: that namespace only. Without it the console shows every namespace the kubeconfig's
      // person may list, else their context's namespace (it reads the same kubeconfig).
      ...(globals.namespace && !globals.allNamespaces ? ['--namespace', globals.namespace] : []),
      ...(flags.proxyUrl ? ['--proxy-url', flags.proxyUrl] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, SIMLOCK_LOG_LEVEL: 'warn' } },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4096);
    io.writeErr(chunk.toString());
  });
  const url = await new Promise<string | undefined>((resolve) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve(/^simlock console: (\S+)$/.exec(line)?.[1]));
    child.once('exit', () => resolve(undefined));
  });
  if (!url) {
    throw new SimlockError(
      'UNAVAILABLE',
      `the console did not start: ${stderr.trim() || 'no URL'}`,
    );
  }
  io.out(`simlock console: ${url}`);
  io.err('Ctrl-C stops it.');
  const open = flags.noOpen ? undefined : opener();
  if (open) {
    const browser = spawn(open, [url], { stdio: 'ignore', detached: true });
    browser.on('error', () => io.err(`could not open a browser (${open}); open the URL above`));
    browser.unref();
  }
  const unsubscribe = io.onStop(() => child.kill('SIGTERM'));
  try {
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    return code ?? 0;
  } finally {
    unsubscribe();
  }
}
