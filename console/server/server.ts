// Starts a console: the store's one watch of the cluster, the HTTP server on host:port, and the
// page built and served. Local mode answers only on its own loopback address.
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { KubeClient, Logger } from '../../runtime/index.js';
import type { AttentionSettings } from '../model/wire.js';
import { findProxyUrl } from './actions.js';
import { createConsoleApp } from './app.js';
import { ensureConsoleBuilt } from './build.js';
import { Sessions } from './sessions.js';
import { ConsoleStore } from './store.js';

export interface ConsoleOptions {
  /** The console's own identity: its watches (token mode), everything (local mode). */
  client: KubeClient;
  mode: 'local' | 'token';
  log: Logger;
  host?: string;
  /** 0: any free port. */
  port?: number;
  simlockNamespace?: string;
  /**
   * Only this namespace's requests and leases; none: all, when the console's identity may list
   * them everywhere, else its kubeconfig context's namespace.
   */
  namespace?: string | undefined;
  proxyUrl?: string | undefined;
  /** Set the cookie's Secure flag (the console is served over HTTPS in front). */
  secureCookies?: boolean;
  /** A built page elsewhere; default: build console/web when stale. */
  webRoot?: string;
  /**
   * The Attention page's thresholds and the controller's maximum lease duration (defaults:
   * DEFAULT_ATTENTION).
   */
  attention?: Partial<AttentionSettings>;
}

export interface RunningConsole {
  /** Where the console answers. */
  url: string;
  /** Local mode: the URL to open, with the key that admits the kubeconfig's person. */
  openUrl: string;
  store: ConsoleStore;
  stop(): Promise<void>;
}

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const host = options.host ?? '127.0.0.1';
  const simlockNamespace = options.simlockNamespace ?? 'simlock-system';
  const webRoot = options.webRoot ?? (await ensureConsoleBuilt((line) => options.log.info(line)));
  const store = new ConsoleStore({
    client: options.client,
    log: options.log,
    simlockNamespace,
    namespace: options.namespace,
    // Run locally the console's identity is the person's kubeconfig: what it may not list is
    // what they may not see.
    subject: options.mode === 'local' ? 'You' : "The console's identity",
    attention: options.attention,
  });
  await store.start();
  const sessions = new Sessions(options.mode, options.client);
  let proxyUrl: Promise<string> | undefined;
  let port = 0;
  const app = createConsoleApp({
    store,
    sessions,
    log: options.log,
    webRoot,
    secureCookies: options.secureCookies ?? false,
    simlockNamespace,
    proxyUrl: () => {
      proxyUrl ??= findProxyUrl(options.client, simlockNamespace, options.proxyUrl);
      // A failed lookup is tried again next time (the chart may be installed meanwhile).
      proxyUrl.catch(() => (proxyUrl = undefined));
      return proxyUrl;
    },
    ...(options.mode === 'local'
      ? { allowedHosts: () => [`${host}:${port}`, `localhost:${port}`] }
      : {}),
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    openUrl: options.mode === 'local' ? `${url}/login?key=${sessions.localKey}` : url,
    store,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.stop();
    },
  };
}
