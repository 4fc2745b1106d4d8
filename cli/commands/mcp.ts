// `mcp`: an MCP server on stdio for coding agents (docs/MCP.md).
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function mcpCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'mcp',
    'Serve the Model Context Protocol on stdin/stdout: lease, exec and release for a coding agent',
    (command) =>
      command
        .option('renew-every', {
          type: 'string',
          describe:
            'the session is renewed this often; killed, its leases go within this (default 10s)',
        })
        .option('proxy-url', {
          type: 'string',
          describe: 'the exec proxy (default: $SIMLOCK_PROXY_URL, else the chart ConfigMap)',
        })
        .example('$0 mcp', '')
        .example('$0 mcp --renew-every 5s -n team-a', ''),
    run(async () => (await import('../actions/mcp.js')).mcp),
  );
}
