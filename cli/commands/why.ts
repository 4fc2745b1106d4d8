// `why <request>`: what would unblock a waiting request (ADR 0026).
import { defineCommand } from './define.js';

export const whyCommand = defineCommand({
  usage: 'why <request>',
  summary: 'What would unblock a waiting request: the few smallest changes that would let it run',
  positionals: { request: { type: 'string', describe: 'name of the request' } },
  action: async () => (await import('../actions/why.js')).why,
});
