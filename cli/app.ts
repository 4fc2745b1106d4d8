// The plugin's command line: kubectl-style global flags, the commands, shell completion, and the
// rule that every failure ends as `{"error":{...}}` on stderr with the exit code of its error code.
import yargs, { type Options } from 'yargs';
import { DeviceClass, PLATFORMS, SimlockError, exitCodeFor } from '../api/index.js';
import { COMMANDS, type CommandRunner } from './commands/index.js';
import { OUTPUT_FORMATS } from './flags.js';
import type { CliIO } from './io.js';

/** Values shell completion offers after a flag (yargs offers commands and flag names). */
const FLAG_VALUES: Record<string, readonly string[]> = {
  '--platform': PLATFORMS,
  '--class': DeviceClass.options,
  '--output': OUTPUT_FORMATS,
  '-o': OUTPUT_FORMATS,
};

/** The values to offer for the word being completed, when it is a flag's value we know. */
export function flagValueCompletions(words: readonly string[]): string[] | undefined {
  const current = words.at(-1) ?? '';
  const joined = /^(--[a-z-]+)=(.*)$/.exec(current);
  if (joined) {
    const [, flag = '', partial = ''] = joined;
    return FLAG_VALUES[flag]
      ?.filter((value) => value.startsWith(partial))
      .map((value) => `${flag}=${value}`);
  }
  const previous = words.at(-2);
  return previous === undefined
    ? undefined
    : FLAG_VALUES[previous]?.filter((value) => value.startsWith(current));
}

/** The flags every command takes, kubectl's and simlock's, listed apart in `--help`. */
const GLOBAL_FLAGS: Record<string, Options> = {
  kubeconfig: {
    type: 'string',
    describe: 'kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)',
  },
  context: { type: 'string', describe: 'kubeconfig context to use' },
  cluster: { type: 'string', describe: 'kubeconfig cluster to use' },
  user: { type: 'string', describe: 'kubeconfig user to use' },
  namespace: {
    alias: 'n',
    type: 'string',
    describe: "namespace (default: the context's, else default)",
  },
  'all-namespaces': { alias: 'A', type: 'boolean', describe: 'list across all namespaces' },
  output: { alias: 'o', type: 'string', describe: 'json, yaml, wide or name' },
  'no-headers': { type: 'boolean', describe: 'tables without their header line' },
  'request-timeout': {
    type: 'string',
    describe: 'give up on one API request after this long (0: never; default 30s)',
  },
  'simlock-namespace': {
    type: 'string',
    describe: 'where the agents renew their heartbeats (default simlock-system)',
  },
};

/** Runs the plugin on `args` (argv without node and the script); answers the exit code. */
export async function runCli(args: readonly string[], io: CliIO): Promise<number> {
  let exitCode: number | undefined;
  const run: CommandRunner = (load) => async (argv) => {
    try {
      const action = await load();
      exitCode = await action(argv, io);
    } catch (error) {
      // The Kubernetes error types are loaded with the action, not before.
      const { toSimlockError, errorLine, exitCodeOf } = await import('./errors.js');
      const failure = toSimlockError(error);
      io.err(errorLine(failure));
      exitCode = exitCodeOf(failure);
    }
  };

  // Shell completion: a flag's known values, else what yargs offers (commands and flags).
  const completeFlagValues = (
    _current: string,
    _argv: unknown,
    defaultCompletions: () => void,
    done: (completions: string[]) => void,
  ): void => {
    const marker = args.indexOf('--get-yargs-completions');
    const values = flagValueCompletions(marker >= 0 ? args.slice(marker + 1) : []);
    if (values) done(values);
    else defaultCompletions();
  };

  let cli = yargs([...args])
    .scriptName('kubectl simlock')
    .usage('kubectl simlock <command> [flags]\n\nLease mobile test devices from a simlock fleet.')
    // --no-wait and --no-headers are flags of their own, not the negation of --wait / --headers.
    .parserConfiguration({ 'boolean-negation': false })
    .options(GLOBAL_FLAGS)
    .group(Object.keys(GLOBAL_FLAGS), 'Global flags:');
  for (const command of COMMANDS) cli = command(cli, run);
  cli = cli
    .completion('completion', 'Print a bash or zsh completion script', completeFlagValues)
    .demandCommand(1, 'name a command: lease, release, list, worker or device')
    .recommendCommands()
    .strict()
    .help()
    .alias('help', 'h')
    .version(false)
    .wrap(Math.min(100, io.columns ?? 100))
    .exitProcess(false)
    .fail(false);

  try {
    await cli.parseAsync();
  } catch (error) {
    // Everything the actions throw is caught in `run`: what reaches here is yargs refusing the
    // command line (unknown command or flag, missing argument).
    const message = error instanceof Error ? error.message : String(error);
    const usage = new SimlockError('USAGE', `${message} (see kubectl simlock --help)`);
    io.err(JSON.stringify(usage.toJSON()));
    return exitCodeFor('USAGE');
  }
  return exitCode ?? 0;
}
