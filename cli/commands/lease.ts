// `lease`: create a LeaseRequest and wait for the device (DESIGN.md §7).
import type { Argv } from 'yargs';
import type { CommandRunner } from './runner.js';

export function leaseCommand(cli: Argv, run: CommandRunner): Argv {
  return cli.command(
    'lease',
    'Lease a device: create a LeaseRequest, show why it waits, print the grant',
    (command) =>
      command
        .option('platform', { type: 'string', describe: 'ios or android (required)' })
        .option('device', { type: 'string', describe: 'model, any case ("iPhone 16")' })
        .option('class', { type: 'string', describe: 'phone or tablet' })
        .option('os', { type: 'string', describe: 'OS version or range: 18.4, ">=18 <19", 34' })
        .option('physical', { type: 'boolean', describe: 'a physical device, not a simulator' })
        .option('requires', {
          type: 'string',
          array: true,
          describe: 'a capability the worker must offer (repeat, or comma-separate)',
        })
        .option('no-wait', {
          type: 'boolean',
          describe: 'fail with NO_CAPACITY (exit 11) instead of waiting',
        })
        .option('timeout', { type: 'string', describe: 'how long to wait (default 300s)' })
        .option('duration', { type: 'string', describe: 'lease lifetime (default 1h)' })
        .option('holder', { type: 'string', describe: 'who holds it: ci, local-agent, a job' })
        .option('name', { type: 'string', describe: 'request name (default: lease-<random>)' })
        .option('idle-timeout', {
          type: 'string',
          describe:
            'release it after this long with no exec through the proxy (never while one runs)',
        })
        .option('hold', {
          type: 'boolean',
          describe: 'stay in the foreground renewing; release on exit, Ctrl-C or SIGTERM',
        })
        .option('renew-every', {
          type: 'string',
          describe: 'with --hold: released when not renewed within this (default 10s)',
        })
        .option('detach', {
          type: 'boolean',
          describe: 'print the grant and exit, the lease lives on (the default)',
        })
        .option('owner', {
          type: 'string',
          describe:
            'pod/NAME that owns the request: deleting the pod releases it (default: this pod, in a pod)',
        })
        .example('$0 lease --platform ios --device "iPhone 16"', '')
        .example('$0 lease --platform android --physical --os ">=34" -o json', '')
        .example('$0 lease --platform ios --hold --renew-every 10s', ''),
    run(async () => (await import('../actions/lease.js')).lease),
  );
}
