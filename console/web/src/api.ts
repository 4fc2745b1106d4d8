// Calls to the console server. A refusal is read from the contract's error body, so the page
// shows the code and the message the API server (or the proxy) gave.
import { HttpErrorBody } from '../../../api/index.js';

export class ConsoleCallError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ConsoleCallError';
  }
}

export async function failureOf(response: Response): Promise<ConsoleCallError> {
  // A body that is not JSON (a proxy's HTML page, a cut connection) reads as no error body.
  const parsed: unknown = await response.json().catch(() => undefined);
  const body = HttpErrorBody.safeParse(parsed);
  return body.success
    ? new ConsoleCallError(body.data.error.code, body.data.error.message, response.status)
    : new ConsoleCallError(
        'INTERNAL',
        `the console answered HTTP ${response.status}`,
        response.status,
      );
}

/** A POST with the header the server asks of every POST. */
export async function post(path: string, body?: unknown): Promise<void> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { 'x-simlock-console': '1', 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  if (!response.ok) throw await failureOf(response);
}

export function path(...parts: string[]): string {
  return parts.map((part) => encodeURIComponent(part)).join('/');
}
