// `worker list | drain <worker> | undrain <worker>`.
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function workerCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command('worker', 'Device hosts: list, drain, undrain', (command) =>
    command
      .command(
        'list',
        'List workers: drained, health, running/limit, devices, connected',
        (sub) =>
          sub.option('selector', {
            alias: 'l',
            type: 'string',
            describe: 'label selector, as kubectl -l',
          }),
        run(async () => (await import('../actions/worker.js')).workerList),
      )
      .command(
        'drain <worker>',
        'Take no new leases on a worker (spec.drained: true)',
        (sub) => sub.positional('worker', { type: 'string', describe: 'worker name' }),
        run(async () => (await import('../actions/worker.js')).workerDrain),
      )
      .command(
        'undrain <worker>',
        'Take leases on a worker again (spec.drained: false)',
        (sub) => sub.positional('worker', { type: 'string', describe: 'worker name' }),
        run(async () => (await import('../actions/worker.js')).workerUndrain),
      )
      .demandCommand(1, 'name a worker command: list, drain or undrain'),
  );
}
