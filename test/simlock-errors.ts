// What a test of a refusal reads: the SimlockError a call throws, or its USAGE message.
import { SimlockError } from '../api/index.js';

/** The SimlockError `run` throws; any other error is thrown on, and none fails the test. */
export function simlockErrorOf(run: () => unknown): SimlockError {
  try {
    run();
  } catch (error) {
    if (error instanceof SimlockError) return error;
    throw error;
  }
  throw new Error('expected a SimlockError, and nothing was thrown');
}

/** The message of the USAGE error `run` throws (another code fails the test). */
export function usageMessageOf(run: () => unknown): string {
  const error = simlockErrorOf(run);
  if (error.code !== 'USAGE')
    throw new Error(`expected USAGE, got ${error.code}: ${error.message}`);
  return error.message;
}
