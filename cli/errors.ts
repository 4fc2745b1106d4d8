// Every failure of the plugin becomes a SimlockError with a code from api/errors.ts, printed as
// `{"error":{"code","message","details?"}}` on stderr, and exits with that code's exit code.
import { SimlockError, exitCodeFor, type ErrorCode } from '../api/index.js';
import { KubeApiError, KubeUnavailableError } from '../runtime/index.js';

/** The API server's answer, in our codes. */
function fromApiStatus(error: KubeApiError): SimlockError {
  const code: ErrorCode =
    error.status === 400 || error.status === 409 || error.status === 422
      ? 'INVALID_REQUEST'
      : error.status === 401
        ? 'UNAUTHENTICATED'
        : error.status === 403
          ? 'FORBIDDEN'
          : error.status === 404
            ? 'NOT_FOUND'
            : error.status === 429 || error.status >= 500
              ? 'UNAVAILABLE'
              : 'INTERNAL';
  return new SimlockError(code, error.message, {
    status: String(error.status),
    reason: error.reason,
  });
}

/** Any thrown value, as the error a person (or a script) reads. */
export function toSimlockError(error: unknown): SimlockError {
  if (error instanceof SimlockError) return error;
  if (error instanceof KubeApiError) return fromApiStatus(error);
  if (error instanceof KubeUnavailableError) return new SimlockError('UNAVAILABLE', error.message);
  const message = error instanceof Error ? error.message : String(error);
  return new SimlockError('INTERNAL', message);
}

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
