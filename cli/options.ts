// The connection the global flags describe: the kubeconfig as kubectl reads it, with --context,
// --cluster and --user applied, and the namespace to work in.
import { SimlockError } from '../api/index.js';
import { KubeClient, loadKubeConfig } from '../runtime/index.js';
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

/** Loads the kubeconfig as kubectl would and applies --context, --cluster and --user. */
export function connect(globals: GlobalFlags): Session {
  let config;
  try {
    config = loadKubeConfig({ kubeconfig: globals.kubeconfig });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SimlockError('UNAVAILABLE', `cannot use the kubeconfig: ${message}`);
  }
  if (globals.context !== undefined) {
    if (!config.getContextObject(globals.context)) {
      throw usageError('--context', `context "${globals.context}" is not in the kubeconfig`);
    }
    config.setCurrentContext(globals.context);
  }
  if (globals.cluster !== undefined || globals.user !== undefined) {
    // An ad hoc context: the current one with its cluster or user swapped, as kubectl does.
    const current = config.getContextObject(config.getCurrentContext());
    const cluster = globals.cluster ?? current?.cluster;
    const user = globals.user ?? current?.user;
    if (cluster === undefined || !config.getCluster(cluster)) {
      throw usageError('--cluster', `cluster "${cluster ?? ''}" is not in the kubeconfig`);
    }
    if (user === undefined || !config.getUser(user)) {
      throw usageError('--user', `user "${user ?? ''}" is not in the kubeconfig`);
    }
    const name = 'kubectl-simlock-flags';
    config.addContext({
      name,
      cluster,
      user,
      ...(current?.namespace ? { namespace: current.namespace } : {}),
    });
    config.setCurrentContext(name);
  }
  const requestTimeoutMs = globals.requestTimeout * 1000;
  let client: KubeClient;
  try {
    client = new KubeClient(config, requestTimeoutMs);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new SimlockError('UNAVAILABLE', `cannot use the kubeconfig: ${message}`);
  }
  const namespace = globals.namespace ?? client.namespace;
  return {
    client,
    namespace,
    listNamespace: globals.allNamespaces ? undefined : namespace,
    requestTimeoutMs,
    globals,
  };
}
