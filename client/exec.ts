// Running a tool on a leased device through the exec proxy (runtime/exec-client.ts), and its
// screenshot (runtime/screenshot.ts). The proxy checks who we are by a bearer token (the
// kubeconfig's, or $SIMLOCK_TOKEN) and whether we may exec; it is found at the given URL,
// $SIMLOCK_PROXY_URL, or the chart's ConfigMap `simlock`.
import { SimlockError, type ExecTool } from '../api/index.js';
import {
  chartProxyUrl,
  execThroughProxy,
  kubeconfigBearerToken,
  screenshotThroughProxy,
  type KubeClient,
} from '../runtime/index.js';
import { readRequest } from './kube.js';

export interface ProxyOptions {
  /** The exec proxy's URL; otherwise $SIMLOCK_PROXY_URL, else the chart's ConfigMap. */
  proxyUrl?: string | undefined;
  /** A bearer token for the proxy; otherwise $SIMLOCK_TOKEN, else the kubeconfig's. */
  token?: string | undefined;
  /** Where the chart is installed (its ConfigMap `simlock` names the proxy). */
  simlockNamespace?: string | undefined;
}

export interface ExecOptions {
  onOutput?: ((stream: 'stdout' | 'stderr', data: string) => void) | undefined;
  /** Aborted: the call hangs up, and the proxy stops the tool. */
  signal?: AbortSignal | undefined;
  timeoutSeconds?: number | undefined;
  /** base64: each output chunk is the base64 of its bytes (binary output). */
  encoding?: 'utf8' | 'base64' | undefined;
}

/** The proxy's URL and a token for it, found once per connection. */
export class ProxyAccess {
  private found: Promise<{ url: string; token: string }> | undefined;

  constructor(
    private readonly client: KubeClient,
    private readonly options: ProxyOptions = {},
  ) {}

  resolve(): Promise<{ url: string; token: string }> {
    this.found ??= this.url().then(async (url) => ({ url, token: await this.token() }));
    // A failure is said now and looked for again next time (the chart may be installed since).
    this.found.catch(() => (this.found = undefined));
    return this.found;
  }

  private async url(): Promise<string> {
    const given = this.options.proxyUrl ?? process.env.SIMLOCK_PROXY_URL;
    if (given) return given;
    const namespace = this.options.simlockNamespace ?? 'simlock-system';
    const published = await chartProxyUrl(this.client, namespace);
    if (published) return published;
    throw new SimlockError(
      'UNAVAILABLE',
      `no exec proxy known: pass --proxy-url, set SIMLOCK_PROXY_URL, or install the chart (ConfigMap ${namespace}/simlock)`,
    );
  }

  private async token(): Promise<string> {
    const given = this.options.token ?? process.env.SIMLOCK_TOKEN;
    if (given) return given;
    const token = await kubeconfigBearerToken(this.client);
    if (!token) {
      throw new SimlockError(
        'UNAUTHENTICATED',
        'the exec proxy needs a bearer token: this kubeconfig user has none (client certificates are not forwarded); set SIMLOCK_TOKEN',
      );
    }
    return token;
  }
}

/** Runs `tool args` on the device of lease `name`; answers the tool's exit code. */
export async function execOnLease(
  proxy: ProxyAccess,
  namespace: string,
  name: string,
  tool: ExecTool,
  args: readonly string[],
  options: ExecOptions = {},
): Promise<number> {
  const { url, token } = await proxy.resolve();
  const { exitCode } = await execThroughProxy({
    url,
    token,
    namespace,
    lease: name,
    tool,
    args: [...args],
    ...(options.timeoutSeconds !== undefined ? { timeoutSeconds: options.timeoutSeconds } : {}),
    ...(options.encoding !== undefined ? { encoding: options.encoding } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    onOutput: options.onOutput ?? (() => undefined),
  });
  return exitCode;
}

/**
 * The PNG of the leased device's screen. The request says the grant (its phase and device), wherever
 * its Lease lives (ADR 0034); the proxy finds the Lease from it.
 */
export async function screenshotOfLease(
  client: KubeClient,
  proxy: ProxyAccess,
  namespace: string,
  name: string,
): Promise<Uint8Array> {
  const request = await readRequest(client, namespace, name);
  const png = await screenshotThroughProxy({
    namespace,
    name,
    request,
    proxy: () => proxy.resolve(),
  });
  return new Uint8Array(png);
}
