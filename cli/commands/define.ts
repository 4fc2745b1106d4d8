// A command as data: what yargs shows and parses (usage, summary, positionals, flags, examples) and
// the action it runs, imported only when the command runs (runner.ts). The commands with
// subcommands or parser settings of their own (worker, device, exec) still build theirs by hand.
import type { Argv, Options, PositionalOptions } from 'yargs';
import type { ActionLoader, CommandRunner } from './runner.js';

export interface CommandSpec {
  /** The command and its positionals, as yargs reads them: `release <lease>`. */
  usage: string;
  /** The line `--help` shows for it. */
  summary: string;
  positionals?: Record<string, PositionalOptions>;
  /** Its own flags, in the order `--help` lists them. */
  flags?: Record<string, Options>;
  /** Command lines `--help` shows as examples (`$0` is `kubectl simlock`). */
  examples?: readonly string[];
  action: ActionLoader;
}

/** What yargs shows for the command's words: positionals, flags, then examples. */
export function commandFlags(command: Argv, spec: Omit<CommandSpec, 'action'>): Argv {
  let built = command;
  for (const [name, options] of Object.entries(spec.positionals ?? {})) {
    built = built.positional(name, options);
  }
  built = built.options(spec.flags ?? {});
  for (const example of spec.examples ?? []) built = built.example(example, '');
  return built;
}

/** The command defined by `spec`, added to a yargs instance as COMMANDS' entries are. */
export function defineCommand(spec: CommandSpec): (cli: Argv, run: CommandRunner) => Argv {
  return (cli, run) =>
    cli.command(
      spec.usage,
      spec.summary,
      (command) => commandFlags(command, spec),
      run(spec.action),
    );
}
