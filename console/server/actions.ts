// What a person can do from the console: drain or undrain a worker, release a lease, take a
// screenshot of a leased device. Each goes to the API server (or the exec proxy) with the
// person's own credentials, so it is allowed or refused there, and a refusal carries the API
// server's message.
import { z } from 'zod';
import { ERRORS, LeaseRequestObject, SimlockError, type ErrorCode } from '../../api/index.js';
import {
  chartProxyUrl,
  KubeApiError,
  KubeUnavailableError,
  requestUnquarantine,
  screenshotThroughProxy,
  simlockPath,
  type KubeClient,
} from '../../runtime/index.js';
import type { Person } from './sessions.js';

/** An API server's refusal, said with the contract's code and the API server's own message. */
export function asSimlockError(error: unknown): SimlockError {
  if (error instanceof SimlockError) return error;
  if (error instanceof KubeApiError) {
    const code: ErrorCode =
      error.status === 401
        ? 'UNAUTHENTICATED'
        : error.status === 403
          ? 'FORBIDDEN'
          : error.status === 404
            ? 'NOT_FOUND'
            : error.status >= 500
              ? 'UNAVAILABLE'
              : 'INVALID_REQUEST';
    return new SimlockError(code, error.message);
  }
  if (error instanceof KubeUnavailableError) return new SimlockError('UNAVAILABLE', error.message);
  if (error instanceof z.ZodError) {
    const issue = error.issues[0];
    return new SimlockError(
      'INVALID_REQUEST',
      `${issue?.path.join('.') || 'value'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return new SimlockError('INTERNAL', error instanceof Error ? error.message : String(error));
}

export async function setDrained(person: Person, worker: string, drained: boolean): Promise<void> {
  try {
    await person.client.patch(simlockPath('worker', { name: worker }), { spec: { drained } });
  } catch (error) {
    throw asSimlockError(error);
  }
}

/** Asks the worker's agent to put a quarantined device back in service (its spec.unquarantine). */
export async function unquarantine(person: Person, worker: string, device: string): Promise<void> {
  try {
    await requestUnquarantine(person.client, worker, device, new Date());
  } catch (error) {
    throw asSimlockError(error);
  }
}

/** Deletes the LeaseRequest: the controller releases its Lease and the agent reclaims the device. */
export async function release(person: Person, namespace: string, name: string): Promise<void> {
  try {
    await person.client.delete(simlockPath('leaseRequest', { namespace, name }));
  } catch (error) {
    throw asSimlockError(error);
  }
}

/** The exec proxy's URL: given, or from the ConfigMap `simlock` the chart and `npm run up` write. */
export async function findProxyUrl(
  client: KubeClient,
  simlockNamespace: string,
  given: string | undefined,
): Promise<string> {
  if (given) return given;
  const published = await chartProxyUrl(client, simlockNamespace);
  if (published) return published;
  throw new SimlockError(
    'UNAVAILABLE',
    `no exec proxy known: start the console with --proxy-url, or install the chart (ConfigMap ${simlockNamespace}/simlock)`,
  );
}

/**
 * The PNG of a leased device's screen, through the exec proxy and the device's agent. The grant is
 * read off the request (the person reads no Lease: it lives in its worker's namespace, ADR 0034).
 */
export async function screenshot(
  person: Person,
  proxyUrl: string,
  namespace: string,
  name: string,
): Promise<Buffer> {
  let request: LeaseRequestObject;
  try {
    request = LeaseRequestObject.parse(
      await person.client.get(simlockPath('leaseRequest', { namespace, name })),
    );
  } catch (error) {
    if (error instanceof z.ZodError)
      throw new SimlockError('INTERNAL', `lease ${namespace}/${name} is unreadable`);
    throw asSimlockError(error);
  }
  return screenshotThroughProxy({
    namespace,
    name,
    request,
    proxy: () => {
      if (!person.token) {
        throw new SimlockError(
          'UNAUTHENTICATED',
          'the exec proxy needs a bearer token: this kubeconfig user has none; set SIMLOCK_TOKEN',
        );
      }
      return { url: proxyUrl, token: person.token };
    },
  });
}

export function httpStatusOf(error: SimlockError): number {
  return ERRORS[error.code].httpStatus;
}
