// What would unblock a waiting request, asked with the caller's own credentials (ADR 0026): the
// request, the Workers and the Leases are read, and api's pure `answerWhy` runs the routing stages
// on changed views. Nothing is written and the controller is not asked.
import {
  LeaseRequestObject,
  SimlockError,
  answerWhy,
  type LeaseObject,
  type WhyAnswer,
} from '../api/index.js';
import { KubeApiError, isNotFound, simlockPath, type KubeClient } from '../runtime/index.js';
import { getObject, listLeases, listWorkers, type Warn } from './kube.js';

export interface WhyOptions {
  /** The clock for the answer's times (ms); the machine's by default. */
  now?: number;
  warn?: Warn;
}

/**
 * Leases in every namespace where the caller may list them; else in the request's namespace
 * alone (a lease elsewhere is then not offered as ending), said in a warning.
 */
export async function readableLeases(
  client: KubeClient,
  namespace: string,
  warn: Warn,
): Promise<LeaseObject[]> {
  try {
    return (await listLeases(client, undefined, warn)).map((lease) => lease.object);
  } catch (error) {
    if (!(error instanceof KubeApiError) || error.status !== 403) throw error;
    warn(`cannot list leases in every namespace; only those in ${namespace} are counted`);
    return (await listLeases(client, namespace, warn)).map((lease) => lease.object);
  }
}

export async function whyWaiting(
  client: KubeClient,
  namespace: string,
  name: string,
  options: WhyOptions = {},
): Promise<WhyAnswer> {
  const warn = options.warn ?? (() => undefined);
  let request;
  try {
    request = (
      await getObject(
        client,
        simlockPath('leaseRequest', { namespace, name }),
        LeaseRequestObject,
        'leaserequest',
      )
    ).object;
  } catch (error) {
    if (isNotFound(error))
      throw new SimlockError(
        'NOT_FOUND',
        `request "${name}" not found in namespace "${namespace}"`,
      );
    throw error;
  }
  const now = options.now ?? Date.now();
  if (request.status?.phase !== 'Waiting') return answerWhy(request, [], [], now);
  const [workers, leases] = await Promise.all([
    listWorkers(client, warn).then((list) => list.map((worker) => worker.object)),
    readableLeases(client, namespace, warn),
  ]);
  return answerWhy(request, workers, leases, now);
}
