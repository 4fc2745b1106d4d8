// `release <lease>`: delete the LeaseRequest; the controller releases its Lease.
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function releaseCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'release <lease>',
    'Release a lease (or withdraw a waiting request) and wait until it is gone',
    (command) =>
      command
        .positional('lease', { type: 'string', describe: 'name of the lease or request' })
        .option('no-wait', { type: 'boolean', describe: 'return once the delete is accepted' })
        .option('timeout', { type: 'string', describe: 'how long to wait (default 60s)' })
        .option('force', {
          type: 'boolean',
          describe: "operators: release anyone's lease at once, even while an exec runs",
        }),
    run(async () => (await import('../actions/release.js')).release),
  );
}
