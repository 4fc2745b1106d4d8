// The errors of the Kubernetes client and their tests, shared by its requests (kube-client.ts) and
// its watches (watch.ts).
/** The API server answered with an error status. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** The API server could not be reached, or the kubeconfig is unusable. */
export class KubeUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KubeUnavailableError';
  }
}

export function isNotFound(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 404;
}
export function isConflict(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 409;
}
export function isAlreadyExists(error: unknown): boolean {
  return error instanceof KubeApiError && error.status === 409 && error.reason === 'AlreadyExists';
}

/**
 * An error worth trying again: the API server unreachable or overloaded, or restarting (a 5xx or
 * 429), as opposed to a refusal that retrying will not change.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof KubeApiError) return error.status >= 500 || error.status === 429;
  return error instanceof KubeUnavailableError && error.cause !== undefined;
}
