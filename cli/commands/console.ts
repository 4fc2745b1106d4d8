// `console [-n NS] [--port N] [--no-open] [--proxy-url URL]`: the simlock console on 127.0.0.1.
import { defineCommand } from './define.js';

export const consoleCommand = defineCommand({
  usage: 'console',
  summary: 'Open the simlock console: the fleet and why each request waits, live, in a browser',
  flags: {
    port: { type: 'number', describe: 'port on 127.0.0.1 (default: any free one)' },
    'no-open': { type: 'boolean', describe: 'print the URL, do not open a browser' },
    'proxy-url': {
      type: 'string',
      describe: 'the exec proxy for screenshots (default: ConfigMap simlock)',
    },
  },
  action: async () => (await import('../actions/console.js')).consoleAction,
});
