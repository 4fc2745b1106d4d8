import { describe, expect, it } from 'vitest';
import { ERRORS, ERROR_CODES, SimlockError, type ErrorCode } from '../api/index.js';
import { KubeApiError, KubeUnavailableError } from '../runtime/index.js';
import { runCli } from './app.js';
import { INTERRUPTED_EXIT, errorLine, exitCodeOf, toSimlockError } from './errors.js';
import { RecordingIO } from './io.js';

/** The exit code of every error code, as docs/CLI.md promises them (DESIGN.md §7.3: 11 and 12). */
const EXIT_CODES: Record<ErrorCode, number> = {
  INTERNAL: 1,
  USAGE: 2,
  INVALID_REQUEST: 3,
  UNAUTHENTICATED: 4,
  FORBIDDEN: 5,
  NOT_FOUND: 6,
  UNAVAILABLE: 10,
  NO_CAPACITY: 11,
  UNKNOWN_MODEL: 12,
  RUNTIME_MISSING: 13,
  NO_DRIVER: 14,
  CAPABILITY_MISSING: 15,
  TIMEOUT: 16,
  WITHDRAWN: 17,
  LEASE_NOT_ACTIVE: 18,
  TOOL_NOT_ALLOWED: 19,
  EXEC_TIMEOUT: 20,
  LEASE_LOST: 21,
};

describe('exit codes', () => {
  it.each(ERROR_CODES)('%s exits with its documented code and prints its JSON', (code) => {
    const error = toSimlockError(new SimlockError(code, `it went ${code}`, { why: 'test' }));
    expect(exitCodeOf(error)).toBe(EXIT_CODES[code]);
    expect(exitCodeOf(error)).toBe(ERRORS[code].exitCode);
    expect(JSON.parse(errorLine(error))).toEqual({
      error: { code, message: `it went ${code}`, details: { why: 'test' } },
    });
  });

  it('covers every code, each with its own exit code, none 0 and none a signal’s', () => {
    expect(Object.keys(EXIT_CODES).sort()).toEqual([...ERROR_CODES].sort());
    const codes = Object.values(EXIT_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toBeGreaterThan(0);
    for (const code of codes) expect(code).toBeLessThan(INTERRUPTED_EXIT - 2);
  });

  it('prints no details when there are none', () => {
    expect(errorLine(new SimlockError('NO_CAPACITY', 'full'))).toBe(
      '{"error":{"code":"NO_CAPACITY","message":"full"}}',
    );
  });
});

describe('API server answers become codes', () => {
  it.each([
    [400, 'BadRequest', 'INVALID_REQUEST'],
    [409, 'AlreadyExists', 'INVALID_REQUEST'],
    [422, 'Invalid', 'INVALID_REQUEST'],
    [401, 'Unauthorized', 'UNAUTHENTICATED'],
    [403, 'Forbidden', 'FORBIDDEN'],
    [404, 'NotFound', 'NOT_FOUND'],
    [429, 'TooManyRequests', 'UNAVAILABLE'],
    [503, 'ServiceUnavailable', 'UNAVAILABLE'],
    [418, 'Teapot', 'INTERNAL'],
  ] as const)('HTTP %d (%s) is %s, with the server’s message', (status, reason, code) => {
    const error = toSimlockError(new KubeApiError(status, reason, 'the server said so', {}));
    expect(error.code).toBe(code);
    expect(error.message).toBe('the server said so');
    expect(error.details).toEqual({ status: String(status), reason });
  });

  it('an unreachable cluster is UNAVAILABLE (exit 10)', () => {
    const error = toSimlockError(new KubeUnavailableError('connect ECONNREFUSED'));
    expect([error.code, exitCodeOf(error)]).toEqual(['UNAVAILABLE', 10]);
  });

  it('anything else is INTERNAL (exit 1)', () => {
    expect(exitCodeOf(toSimlockError(new TypeError('oops')))).toBe(1);
    expect(toSimlockError('a string').message).toBe('a string');
  });
});

describe('the command line, in process', () => {
  async function run(...args: string[]) {
    const io = new RecordingIO();
    const exitCode = await runCli(args, io);
    const last = io.stderr.at(-1) ?? '{}';
    return {
      exitCode,
      io,
      error: (JSON.parse(last) as { error?: { code: string; message: string } }).error,
    };
  }

  it('an unknown command is USAGE (exit 2)', async () => {
    const { exitCode, error } = await run('bogus');
    expect(exitCode).toBe(2);
    expect(error?.code).toBe('USAGE');
    expect(error?.message).toContain('bogus');
  });

  it('an unknown flag is USAGE (exit 2)', async () => {
    const { exitCode, error } = await run('list', '--requests', '--frobnicate');
    expect([exitCode, error?.code]).toEqual([2, 'USAGE']);
  });

  it('no command is USAGE (exit 2)', async () => {
    expect((await run()).exitCode).toBe(2);
  });

  it('release without its lease is USAGE (exit 2)', async () => {
    expect((await run('release')).exitCode).toBe(2);
  });

  it('a bad lease flag is USAGE naming the flag, before any cluster is asked', async () => {
    const { exitCode, error } = await run('lease', '--platform', 'ios', '--os', 'latest');
    expect(exitCode).toBe(2);
    expect(error?.message.startsWith('--os: ')).toBe(true);
  });

  it('list needs exactly one of --requests and --leases', async () => {
    const { exitCode, error } = await run('list', '--kubeconfig', '/nonexistent');
    expect([exitCode, error?.code]).toEqual([2, 'USAGE']);
  });

  it('a kubeconfig that cannot be read is UNAVAILABLE (exit 10)', async () => {
    const { exitCode, error } = await run('list', '--requests', '--kubeconfig', '/nonexistent');
    expect([exitCode, error?.code]).toEqual([10, 'UNAVAILABLE']);
  });
});
