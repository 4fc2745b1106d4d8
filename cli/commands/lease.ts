// `lease`: create a LeaseRequest and wait for the device (DESIGN.md §7).
import { defineCommand } from './define.js';

export const leaseCommand = defineCommand({
  usage: 'lease',
  summary: 'Lease a device: create a LeaseRequest, show why it waits, print the grant',
  flags: {
    platform: { type: 'string', describe: 'ios or android (required)' },
    device: { type: 'string', describe: 'model, any case ("iPhone 16")' },
    class: { type: 'string', describe: 'phone or tablet' },
    os: { type: 'string', describe: 'OS version or range: 18.4, ">=18 <19", 34' },
    physical: { type: 'boolean', describe: 'a physical device, not a simulator' },
    requires: {
      type: 'string',
      array: true,
      describe: 'a capability the worker must offer (repeat, or comma-separate)',
    },
    'no-wait': { type: 'boolean', describe: 'fail with NO_CAPACITY (exit 11) instead of waiting' },
    timeout: { type: 'string', describe: 'how long to wait (default 300s)' },
    duration: { type: 'string', describe: 'lease lifetime (default 1h)' },
    holder: { type: 'string', describe: 'who holds it: ci, local-agent, a job' },
    name: { type: 'string', describe: 'request name (default: lease-<random>)' },
    'idle-timeout': {
      type: 'string',
      describe: 'release it after this long with no exec through the proxy (never while one runs)',
    },
    hold: {
      type: 'boolean',
      describe: 'stay in the foreground renewing; release on exit, Ctrl-C or SIGTERM',
    },
    'renew-every': {
      type: 'string',
      describe: 'with --hold: released when not renewed within this (default 10s)',
    },
    detach: {
      type: 'boolean',
      describe: 'print the grant and exit, the lease lives on (the default)',
    },
    owner: {
      type: 'string',
      describe:
        'pod/NAME that owns the request: deleting the pod releases it (default: this pod, in a pod)',
    },
  },
  examples: [
    '$0 lease --platform ios --device "iPhone 16"',
    '$0 lease --platform android --physical --os ">=34" -o json',
    '$0 lease --platform ios --hold --renew-every 10s',
  ],
  action: async () => (await import('../actions/lease.js')).lease,
});
