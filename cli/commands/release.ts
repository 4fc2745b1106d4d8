// `release <lease>`: delete the LeaseRequest; the controller releases its Lease.
import { defineCommand } from './define.js';

export const releaseCommand = defineCommand({
  usage: 'release <lease>',
  summary: 'Release a lease (or withdraw a waiting request) and wait until it is gone',
  positionals: { lease: { type: 'string', describe: 'name of the lease or request' } },
  flags: {
    'no-wait': { type: 'boolean', describe: 'return once the delete is accepted' },
    timeout: { type: 'string', describe: 'how long to wait (default 60s)' },
    force: {
      type: 'boolean',
      describe: "operators: release anyone's lease at once, even while an exec runs",
    },
  },
  action: async () => (await import('../actions/release.js')).release,
});
