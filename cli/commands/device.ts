// `device list [--worker W]`.
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function deviceCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command('device', 'Devices the agents report', (command) =>
    command
      .command(
        'list',
        'List devices: worker, id, name, model, platform, os, physical, state, presence',
        (sub) =>
          sub
            .option('worker', { type: 'string', describe: 'only this worker (name or label)' })
            .option('selector', {
              alias: 'l',
              type: 'string',
              describe: 'only workers with these labels',
            }),
        run(async () => (await import('../actions/device.js')).deviceList),
      )
      .demandCommand(1, 'name a device command: list'),
  );
}
