// The unit and cluster projects' files share a worker and its modules (`isolate: false`,
// vitest.config.ts), so a file that leaves fake timers on, or the environment changed, would
// change the files run after it in that worker, and which those are depends on timing. Such a
// file fails here instead.
import { afterAll, beforeAll, vi } from 'vitest';

let environment = '';

beforeAll(() => {
  environment = JSON.stringify(process.env);
});

afterAll(() => {
  if (vi.isFakeTimers()) {
    throw new Error('this file left fake timers on: end it with vi.useRealTimers()');
  }
  if (JSON.stringify(process.env) !== environment) {
    throw new Error('this file changed process.env and left it so: restore what it changed');
  }
});
