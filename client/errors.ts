// Every failure the client reports is a SimlockError: a code from api/errors.ts and a message
// for a person. The API server's refusals are turned into our codes here, once.
import { SimlockError, type ErrorCode } from '../api/index.js';
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

/**
 * A lease() the caller stopped (its `signal` aborted) while it waited: the request was withdrawn,
 * or `withdrawn` says why it could not be.
 */
export class LeaseCancelledError extends SimlockError {
  constructor(
    readonly request: string,
    readonly withdrawn: string,
  ) {
    super('WITHDRAWN', `stopped while waiting: ${withdrawn}`, { request });
    this.name = 'LeaseCancelledError';
  }
}
