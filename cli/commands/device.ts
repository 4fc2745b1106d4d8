// `device list [--worker W] | unquarantine <worker> <device-id>`.
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
      .command(
        'unquarantine <worker> <device-id>',
        "Put a quarantined device back in service (the Worker's spec.unquarantine)",
        (sub) =>
          sub
            .positional('worker', { type: 'string', describe: 'worker name' })
            .positional('device-id', {
              type: 'string',
              describe: 'the device id, as device list shows it',
            }),
        run(async () => (await import('../actions/device.js')).deviceUnquarantine),
      )
      .demandCommand(1, 'name a device command: list or unquarantine'),
  );
}
