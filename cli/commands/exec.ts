// `exec <lease> -- TOOL ARGS…` and the shortcuts `simctl`, `devicectl`, `adb` (`--lease <name>`):
// run a tool on the leased device through the exec proxy, streaming its output, and exit with the
// tool's exit code.
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

function proxyOptions(command: Argv): Argv {
  return command
    .option('proxy-url', {
      type: 'string',
      describe:
        'the exec proxy (default: $SIMLOCK_PROXY_URL, else the ConfigMap simlock in --simlock-namespace)',
    })
    .option('exec-timeout', {
      type: 'string',
      describe: 'stop the tool after this long (e.g. 10m)',
    });
}

export function execCommand(cli: Argv, run: CommandRunner): Argv {
  const action = run(async () => (await import('../actions/exec.js')).exec);
  cli = cli.command(
    'exec <lease> [command..]',
    'Run simctl, devicectl or adb on a leased device: exec <lease> -- TOOL ARGS…',
    (command) =>
      proxyOptions(command)
        .positional('lease', { type: 'string', describe: 'name of the lease' })
        .positional('command', {
          type: 'string',
          array: true,
          describe: 'the tool and its arguments',
        })
        .parserConfiguration({ 'populate--': true, 'unknown-options-as-args': true }),
    action,
  );
  for (const tool of ['simctl', 'devicectl', 'adb'] as const) {
    cli = cli.command(
      `${tool} [args..]`,
      `Run ${tool} on a leased device: ${tool} --lease <name> ARGS…`,
      (command) =>
        proxyOptions(command)
          .option('lease', { type: 'string', demandOption: true, describe: 'name of the lease' })
          .positional('args', { type: 'string', array: true })
          .default('tool', tool)
          .parserConfiguration({ 'populate--': true, 'unknown-options-as-args': true }),
      action,
    );
  }
  return cli;
}
