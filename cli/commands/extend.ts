// `extend <lease>`: make a granted lease live longer (spec.durationSeconds grows).
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function extendCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'extend <lease>',
    'Extend a granted lease: --by a duration, or --until a time (up to the maximum, default 24h)',
    (command) =>
      command
        .positional('lease', { type: 'string', describe: 'name of the lease' })
        .option('by', { type: 'string', describe: 'how much longer: 30m, 2h' })
        .option('until', { type: 'string', describe: 'when it should end: 2026-05-01T18:00:00Z' })
        .example('$0 extend lease-x7k2p --by 30m', '')
        .example('$0 extend lease-x7k2p --until 2026-05-01T18:00:00Z', ''),
    run(async () => (await import('../actions/extend.js')).extend),
  );
}
