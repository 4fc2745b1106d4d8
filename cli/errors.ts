// Every failure of the plugin becomes a SimlockError with a code from api/errors.ts, printed as
// `{"error":{"code","message","details?"}}` on stderr, and exits with that code's exit code.
import { exitCodeFor, type SimlockError } from '../api/index.js';

export { toSimlockError } from '../client/index.js';

/** The one line printed on stderr for a failure. */
export function errorLine(error: SimlockError): string {
  return JSON.stringify(error.toJSON());
}

export function exitCodeOf(error: SimlockError): number {
  return exitCodeFor(error.code);
}

/** Exit codes that are not error codes: interrupted (128 + SIGINT) and terminated (128 + SIGTERM). */
export const INTERRUPTED_EXIT = 130;
export const TERMINATED_EXIT = 143;
