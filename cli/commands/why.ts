// `why <request>`: what would unblock a waiting request (ADR 0026).
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function whyCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'why <request>',
    'What would unblock a waiting request: the few smallest changes that would let it run',
    (command) => command.positional('request', { type: 'string', describe: 'name of the request' }),
    run(async () => (await import('../actions/why.js')).why),
  );
}
