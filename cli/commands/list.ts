// `list --requests | --leases`.
import { defineCommand } from './define.js';

export const listCommand = defineCommand({
  usage: 'list',
  summary: 'List waiting requests (with each worker’s reason) or simlock Leases',
  flags: {
    requests: {
      type: 'boolean',
      describe: 'requests not yet granted, and why each worker cannot take them',
    },
    leases: { type: 'boolean', describe: 'simlock Leases (a table)' },
  },
  action: async () => (await import('../actions/list.js')).list,
});
