// `extend <lease>`: make a granted lease live longer (spec.durationSeconds grows).
import { defineCommand } from './define.js';

export const extendCommand = defineCommand({
  usage: 'extend <lease>',
  summary:
    'Extend a granted lease: --by a duration, or --until a time (up to the maximum, default 24h)',
  positionals: { lease: { type: 'string', describe: 'name of the lease' } },
  flags: {
    by: { type: 'string', describe: 'how much longer: 30m, 2h' },
    until: { type: 'string', describe: 'when it should end: 2026-05-01T18:00:00Z' },
  },
  examples: [
    '$0 extend lease-x7k2p --by 30m',
    '$0 extend lease-x7k2p --until 2026-05-01T18:00:00Z',
  ],
  action: async () => (await import('../actions/extend.js')).extend,
});
