// `list --requests | --leases`.
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function listCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'list',
    'List waiting requests (with each worker’s reason) or simlock Leases',
    (command) =>
      command
        .option('requests', {
          type: 'boolean',
          describe: 'requests not yet granted, and why each worker cannot take them',
        })
        .option('leases', { type: 'boolean', describe: 'simlock Leases (a table)' }),
    run(async () => (await import('../actions/list.js')).list),
  );
}
