// The connection the global flags describe (client/connect.ts), with a bad choice named by its
// flag, and the namespace to list in.
import { SimlockError } from '../api/index.js';
import { connect as connectClient } from '../client/index.js';
import { userAgent, type KubeClient } from '../runtime/index.js';
import { usageError, type GlobalFlags } from './flags.js';

export interface Session {
  client: KubeClient;
  /** -n, else the context's namespace, else `default`. */
  namespace: string;
  /** undefined with -A: every namespace. */
  listNamespace: string | undefined;
  requestTimeoutMs: number;
  globals: GlobalFlags;
}

const FLAGS: Record<string, string> = {
  context: '--context',
  cluster: '--cluster',
  user: '--user',
};

/** Loads the kubeconfig as kubectl would and applies --context, --cluster and --user. */
export function connect(globals: GlobalFlags): Session {
  let connection;
  try {
    connection = connectClient({
      kubeconfig: globals.kubeconfig,
      context: globals.context,
      cluster: globals.cluster,
      user: globals.user,
      namespace: globals.namespace,
      requestTimeoutMs: globals.requestTimeout * 1000,
      userAgent: userAgent('kubectl-simlock'),
    });
  } catch (error) {
    const field = error instanceof SimlockError ? error.details?.field : undefined;
    const flag = field !== undefined ? FLAGS[field] : undefined;
    if (error instanceof SimlockError && flag !== undefined) {
      throw usageError(flag, error.message.slice(`${field}: `.length));
    }
    throw error;
  }
  return {
    client: connection.kube,
    namespace: connection.namespace,
    listNamespace: globals.allNamespaces ? undefined : connection.namespace,
    requestTimeoutMs: connection.requestTimeoutMs,
    globals,
  };
}
