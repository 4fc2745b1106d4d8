// `mcp`: an MCP server on stdio for coding agents (docs/MCP.md).
import { defineCommand } from './define.js';

export const mcpCommand = defineCommand({
  usage: 'mcp',
  summary:
    'Serve the Model Context Protocol on stdin/stdout: lease, exec and release for a coding agent',
  flags: {
    'renew-every': {
      type: 'string',
      describe:
        'the session is renewed this often; killed, its leases go within this (default 10s)',
    },
    'proxy-url': {
      type: 'string',
      describe: 'the exec proxy (default: $SIMLOCK_PROXY_URL, else the chart ConfigMap)',
    },
  },
  examples: ['$0 mcp', '$0 mcp --renew-every 5s -n team-a'],
  action: async () => (await import('../actions/mcp.js')).mcp,
});
