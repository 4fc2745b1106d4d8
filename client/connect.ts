// A connection as kubectl would make it: the kubeconfig (the named file, else $KUBECONFIG, else
// ~/.kube/config), a context, cluster or user swapped in, and the namespace to work in. A bad
// choice is a USAGE error whose details name the option (`field`), so that the plugin can name
// its flag and the MCP server its argument.
import { SimlockError } from '../api/index.js';
import { KubeClient, loadKubeConfig, userAgent } from '../runtime/index.js';

export interface ConnectOptions {
  /** A kubeconfig file; otherwise $KUBECONFIG or ~/.kube/config. */
  kubeconfig?: string | undefined;
  context?: string | undefined;
  cluster?: string | undefined;
  user?: string | undefined;
  /** Otherwise the context's namespace, else `default`. */
  namespace?: string | undefined;
  /** Each API request's timeout (0: none); 30 s unless said. */
  requestTimeoutMs?: number | undefined;
  /**
   * Who is asking (the User-Agent): the field manager of what it writes and its name in the API
   * server's audit log. `simlock-client/<version> …` unless said; the plugin says kubectl-simlock.
   */
  userAgent?: string | undefined;
}

export interface Connection {
  kube: KubeClient;
  namespace: string;
  requestTimeoutMs: number;
}

function usage(field: keyof ConnectOptions, message: string): SimlockError {
  return new SimlockError('USAGE', `${field}: ${message}`, { field });
}

function unusable(error: unknown): SimlockError {
  const message = error instanceof Error ? error.message : String(error);
  return new SimlockError('UNAVAILABLE', `cannot use the kubeconfig: ${message}`);
}

export function connect(options: ConnectOptions = {}): Connection {
  let config;
  try {
    config = loadKubeConfig({ kubeconfig: options.kubeconfig });
  } catch (error) {
    throw unusable(error);
  }
  if (options.context !== undefined) {
    if (!config.getContextObject(options.context)) {
      throw usage('context', `context "${options.context}" is not in the kubeconfig`);
    }
    config.setCurrentContext(options.context);
  }
  if (options.cluster !== undefined || options.user !== undefined) {
    // An ad hoc context: the current one with its cluster or user swapped, as kubectl does.
    const current = config.getContextObject(config.getCurrentContext());
    const cluster = options.cluster ?? current?.cluster;
    const user = options.user ?? current?.user;
    if (cluster === undefined || !config.getCluster(cluster)) {
      throw usage('cluster', `cluster "${cluster ?? ''}" is not in the kubeconfig`);
    }
    if (user === undefined || !config.getUser(user)) {
      throw usage('user', `user "${user ?? ''}" is not in the kubeconfig`);
    }
    const name = 'simlock-client-options';
    config.addContext({
      name,
      cluster,
      user,
      ...(current?.namespace ? { namespace: current.namespace } : {}),
    });
    config.setCurrentContext(name);
  }
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  let kube: KubeClient;
  try {
    kube = new KubeClient(
      config,
      requestTimeoutMs,
      undefined,
      options.userAgent ?? userAgent('simlock-client'),
    );
  } catch (error) {
    throw unusable(error);
  }
  return { kube, namespace: options.namespace ?? kube.namespace, requestTimeoutMs };
}
