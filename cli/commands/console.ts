// `console [-n NS] [--port N] [--no-open] [--proxy-url URL]`: the simlock console on 127.0.0.1.
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function consoleCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'console',
    'Open the simlock console: the fleet and why each request waits, live, in a browser',
    (command) =>
      command
        .option('port', { type: 'number', describe: 'port on 127.0.0.1 (default: any free one)' })
        .option('no-open', { type: 'boolean', describe: 'print the URL, do not open a browser' })
        .option('proxy-url', {
          type: 'string',
          describe: 'the exec proxy for screenshots (default: ConfigMap simlock)',
        }),
    run(async () => (await import('../actions/console.js')).consoleAction),
  );
}
