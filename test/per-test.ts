// A fixture made afresh for each test of a file (or describe) and disposed of after it, used through
// one object that stands for the running test's: `world.standIn` in a test is that test's own.
import { afterEach, beforeEach } from 'vitest';

/**
 * Registers `make` before each test and `dispose` after it (call at the top of a file or describe);
 * answers an object that reads, in each test, the properties of the value made for it.
 */
export function perTest<T extends object>(
  what: string,
  make: () => Promise<T>,
  dispose: (value: T) => Promise<void>,
): T {
  let current: T | undefined;
  beforeEach(async () => {
    current = await make();
  });
  afterEach(async () => {
    if (current !== undefined) await dispose(current);
    current = undefined;
  });
  // A proxy rather than a copy: the tests hold the object from before the first test on.
  return new Proxy({} as T, {
    get: (_target, key) => {
      if (current === undefined) throw new Error(`no ${what} outside a test`);
      return Reflect.get(current, key) as unknown;
    },
  });
}
