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

/**
 * The object asked for is not there: a 404 whose Status names it (`leases.simlock.dev "x" not
 * found`). A 404 that names nothing ("the server could not find the requested resource") says the
 * resource itself is not served: an API server whose custom-resource handler has not caught up
 * after an etcd or API-server restart answers so for a moment, as does one without our CRDs. That
 * is no news about the object, and taken as "gone" it made the controller delete a Lease just
 * granted (a withdrawal that read "not found") and would make the agent give up a device.
 */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof KubeApiError) || error.status !== 404) return false;
  const details = (error.body as { details?: { name?: unknown } } | null | undefined)?.details;
  return typeof details?.name === 'string' && details.name !== '';
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
