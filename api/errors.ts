// Error codes, what they mean, and the exit code the CLI gives each. The one table; docs/CLI.md
// lists the same rows and a test keeps the two equal.
import { z } from 'zod';

export const ERRORS = {
  INTERNAL: { exitCode: 1, httpStatus: 500, summary: 'An unexpected failure inside simlock.' },
  USAGE: {
    exitCode: 2,
    httpStatus: 400,
    summary: 'Bad command-line usage: an unknown flag or a bad value.',
  },
  INVALID_REQUEST: {
    exitCode: 3,
    httpStatus: 400,
    summary: 'The API server or the proxy refused the request as invalid.',
  },
  UNAUTHENTICATED: {
    exitCode: 4,
    httpStatus: 401,
    summary: 'No credentials, or credentials not accepted.',
  },
  FORBIDDEN: {
    exitCode: 5,
    httpStatus: 403,
    summary: 'Authenticated, but not allowed to do this.',
  },
  NOT_FOUND: {
    exitCode: 6,
    httpStatus: 404,
    summary: 'The named lease, request or worker does not exist.',
  },
  UNAVAILABLE: {
    exitCode: 10,
    httpStatus: 503,
    summary: 'The cluster, the proxy or the agent could not be reached.',
  },
  NO_CAPACITY: {
    exitCode: 11,
    httpStatus: 409,
    summary:
      'No worker can take the request now (and it may not wait, or no worker takes requests).',
  },
  UNKNOWN_MODEL: {
    exitCode: 12,
    httpStatus: 422,
    summary: 'No worker offers that model, class or physical device.',
  },
  RUNTIME_MISSING: {
    exitCode: 13,
    httpStatus: 422,
    summary: 'No worker has that OS version installed.',
  },
  NO_DRIVER: { exitCode: 14, httpStatus: 422, summary: 'No worker serves that platform.' },
  CAPABILITY_MISSING: {
    exitCode: 15,
    httpStatus: 422,
    summary: 'No worker offers a required capability.',
  },
  TIMEOUT: { exitCode: 16, httpStatus: 408, summary: 'The request waited past its wait timeout.' },
  WITHDRAWN: {
    exitCode: 17,
    httpStatus: 410,
    summary: 'The request was deleted before it was granted.',
  },
  LEASE_NOT_ACTIVE: {
    exitCode: 18,
    httpStatus: 409,
    summary: 'The lease is not granted (waiting, released or expired).',
  },
  TOOL_NOT_ALLOWED: {
    exitCode: 19,
    httpStatus: 422,
    summary:
      'The tool does not fit the leased device (devicectl on a simulator, simctl on a phone…).',
  },
  EXEC_TIMEOUT: {
    exitCode: 20,
    httpStatus: 504,
    summary: 'The tool ran past its timeout and was stopped.',
  },
  LEASE_LOST: {
    exitCode: 21,
    httpStatus: 410,
    summary: 'The lease ended while in use (expired, or its worker lost it).',
  },
} as const satisfies Record<string, { exitCode: number; httpStatus: number; summary: string }>;

export type ErrorCode = keyof typeof ERRORS;
export const ERROR_CODES = Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]];
export const ErrorCodeSchema = z.enum(ERROR_CODES);

/** Codes by which a worker says it can never serve a request; remembered for good. */
export const CANNOT_SERVE_CODES = [
  'UNKNOWN_MODEL',
  'RUNTIME_MISSING',
  'NO_DRIVER',
  'CAPABILITY_MISSING',
] as const satisfies readonly ErrorCode[];
export type CannotServeCode = (typeof CANNOT_SERVE_CODES)[number];

export function isCannotServeCode(code: string): code is CannotServeCode {
  return (CANNOT_SERVE_CODES as readonly string[]).includes(code);
}

/** The HTTP status the proxy and the agent answer an error with. */
export function httpStatusFor(code: string): number {
  return code in ERRORS ? ERRORS[code as ErrorCode].httpStatus : 500;
}

export function exitCodeFor(code: string): number {
  return code in ERRORS ? ERRORS[code as ErrorCode].exitCode : ERRORS.INTERNAL.exitCode;
}

/** An error meant for a person, with a machine code first. */
export class SimlockError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, string>,
  ) {
    super(message);
    this.name = 'SimlockError';
  }

  toJSON(): { error: { code: ErrorCode; message: string; details?: Record<string, string> } } {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}
