// A small Kubernetes REST client over the credentials of a kubeconfig. client-node loads the
// kubeconfig, applies its credentials (certificates, tokens, exec plugins) and streams watches;
// requests go through node:https, over one keep-alive pool, with a timeout on each, a bound on
// what they read and a rate limit, which client-node's own calls lack (ADR 0013).
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeUnavailableError } from './kube-errors.js';
import { watchWithClientNode, type WatchEvent } from './watch.js';

export interface KubeConfigOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
  /**
   * Sent as User-Agent with every request but watches (`userAgent()` of user-agent.ts): the API
   * server's field manager of our writes, and the name in its audit log. None: the server says
   * "unknown".
   */
  userAgent?: string | undefined;
}

export function loadKubeConfig(options: KubeConfigOptions = {}): KubeConfig {
  const config = new KubeConfig();
  if (options.kubeconfig) config.loadFromFile(options.kubeconfig);
  else config.loadFromDefault();
  if (options.context) {
    if (!config.getContextObject(options.context)) {
      throw new KubeUnavailableError(`context "${options.context}" is not in the kubeconfig`);
    }
    config.setCurrentContext(options.context);
  }
  return config;
}

export {
  KubeApiError,
  KubeUnavailableError,
  isAlreadyExists,
  isConflict,
  isNotFound,
  isTransient,
} from './kube-errors.js';

export type PatchType = 'merge' | 'json' | 'apply';
const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface RequestSettings {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  patch?: PatchType;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** Counts what the client sends, for metrics and the write-economy tests. */
export interface RequestObserver {
  (method: string, path: string, status: number): void;
}

// Reads of the API server are bounded too: a response larger than this is a bug, not data.
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** A client-side request rate, as client-go's QPS and Burst: none means unlimited. */
export interface RateLimit {
  /** Requests per second, sustained; 0 or less: unlimited. */
  qps: number;
  /** Requests that may go at once after a quiet spell; default: qps rounded up (at least 1). */
  burst?: number | undefined;
}

/**
 * A token bucket (client-go's flowcontrol limiter): `burst` tokens, refilled at `qps` a second.
 * `reserve` takes a token and answers how long to wait for it; tokens may go below zero, which
 * queues callers in the order they asked, each at its own moment, with no timer of the bucket's.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  private tokens: number;
  private last: number;

  constructor(
    limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(limit.qps > 0) || !Number.isFinite(limit.qps)) throw new Error('qps must be above 0');
    this.qps = limit.qps;
    this.burst = Math.max(1, Math.floor(limit.burst ?? Math.ceil(limit.qps)));
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** Takes one token; answers the milliseconds to wait before using it (0: go now). */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  /**
   * Takes a token if one is there now (client-go's TryAccept): for what is left out, not waited
   * for, past the rate. Takes none on `false`.
   */
  tryTake(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.qps) / 1000);
    this.last = now;
  }

  /** Resolves when this caller's token is due. */
  async take(): Promise<void> {
    const waitMs = this.reserve();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

export class KubeClient {
  readonly server: string;
  readonly namespace: string;
  private observers: RequestObserver[] = [];
  private readonly limiter: TokenBucket | undefined;
  private pool: { credentials: string; agent: HttpsAgent | HttpAgent } | undefined;

  /** `rateLimit`: every request and every watch (re)opened takes a token first, as in client-go. */
  constructor(
    readonly config: KubeConfig,
    private readonly defaultTimeoutMs = 30_000,
    rateLimit?: RateLimit,
    private readonly userAgent?: string,
  ) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new KubeUnavailableError('the kubeconfig has no current cluster');
    this.server = cluster.server;
    this.namespace = config.getContextObject(config.getCurrentContext())?.namespace ?? 'default';
    this.limiter = rateLimit && rateLimit.qps > 0 ? new TokenBucket(rateLimit) : undefined;
  }

  static fromOptions(
    options: KubeConfigOptions = {},
    timeoutMs?: number,
    rateLimit?: RateLimit,
  ): KubeClient {
    return new KubeClient(loadKubeConfig(options), timeoutMs, rateLimit, options.userAgent);
  }

  observe(observer: RequestObserver): void {
    this.observers.push(observer);
  }

  /** The authenticated identity's user name as the kubeconfig names it (for logs). */
  get user(): string {
    return this.config.getCurrentUser()?.name ?? 'unknown';
  }

  private async open(
    method: string,
    path: string,
    settings: RequestSettings,
  ): Promise<IncomingMessage> {
    if (this.limiter) await this.limiter.take();
    const url = new URL(path, this.server);
    for (const [key, value] of Object.entries(settings.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const options: RequestOptions = {
      method,
      headers: {
        accept: 'application/json',
        ...(this.userAgent === undefined ? {} : { 'user-agent': this.userAgent }),
      },
    };
    await this.config.applyToHTTPSOptions(options);
    const agent = this.connectionPool(url, options);
    if (agent) options.agent = agent;
    let payload: string | undefined;
    if (settings.body !== undefined) {
      payload = JSON.stringify(settings.body);
      options.headers = {
        ...options.headers,
        'content-type': settings.patch ? PATCH_CONTENT_TYPES[settings.patch] : 'application/json',
        'content-length': Buffer.byteLength(payload),
      };
    }
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const timeoutMs = settings.timeoutMs ?? this.defaultTimeoutMs;
    const attempt = (retry: boolean) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const req = send(url, { ...options, signal: settings.signal }, (res) => {
          // The timeout covers waiting for the answer. A watch then stays open for minutes, quiet
          // or not: its own idle timer (watch's idleMs) decides when it is dead, not this one.
          req.setTimeout(0);
          resolve(res);
        });
        req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', (error: NodeJS.ErrnoException) => {
          // A kept-alive connection the server closed just as we reused it: sent once more on a
          // fresh connection, but only a read. A write may have reached the server before the
          // reset and been applied; sent again, a conditional one would be refused (409) for its
          // own success, and its caller would undo what it did. Writes fail instead, and their
          // callers read again before they retry.
          if (retry && method === 'GET' && req.reusedSocket && error.code === 'ECONNRESET') {
            resolve(attempt(false));
            return;
          }
          reject(
            settings.signal?.aborted
              ? error
              : new KubeUnavailableError(`${method} ${url.pathname}: ${error.message}`, {
                  cause: error,
                }),
          );
        });
        req.end(payload);
      });
    return attempt(true);
  }

  /**
   * One keep-alive connection pool per client. client-node hands every call a new Agent, so each
   * request would open its own TLS connection: a full handshake with the client certificate, which
   * on a busy controller or agent was most of the CPU on both ends. The pool is rebuilt when the
   * credentials change (a rotated certificate); a proxy, which client-node handles, keeps its agent.
   */
  private connectionPool(url: URL, options: RequestOptions): HttpsAgent | HttpAgent | undefined {
    if (this.config.getCurrentCluster()?.proxyUrl) return undefined;
    const tls = {
      ca: options.ca,
      cert: options.cert,
      key: options.key,
      pfx: options.pfx,
      passphrase: options.passphrase,
      rejectUnauthorized: options.rejectUnauthorized,
      servername: options.servername,
    };
    const credentials = [url.protocol, ...Object.values(tls).map(credentialText)].join('|');
    if (this.pool?.credentials !== credentials) {
      this.pool?.agent.destroy();
      // Idle connections close after 30 s, before the API server's own 90 s idle timeout, so a
      // request rarely meets a connection the server is closing.
      const settings = { keepAlive: true, timeout: 30_000 };
      this.pool = {
        credentials,
        agent:
          url.protocol === 'http:'
            ? new HttpAgent(settings)
            : new HttpsAgent({ ...settings, ...withoutUndefined(tls) }),
      };
    }
    return this.pool.agent;
  }

  /** One request; answers the parsed JSON body, or throws KubeApiError / KubeUnavailableError. */
  async request(method: string, path: string, settings: RequestSettings = {}): Promise<unknown> {
    const res = await this.open(method, path, settings);
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    for (const observer of this.observers) observer(method, path, status);
    const body: unknown = text.length > 0 ? safeJson(text) : undefined;
    if (status >= 400) throw apiError(status, body, `${method} ${path}`);
    return body;
  }

  get(path: string, settings?: RequestSettings): Promise<unknown> {
    return this.request('GET', path, settings);
  }
  create(path: string, body: unknown, settings?: RequestSettings): Promise<unknown> {
    return this.request('POST', path, { ...settings, body });
  }
  replace(path: string, body: unknown, settings?: RequestSettings): Promise<unknown> {
    return this.request('PUT', path, { ...settings, body });
  }
  patch(
    path: string,
    body: unknown,
    patch: PatchType = 'merge',
    settings?: RequestSettings,
  ): Promise<unknown> {
    return this.request('PATCH', path, { ...settings, body, patch });
  }
  delete(path: string, settings?: RequestSettings): Promise<unknown> {
    return this.request('DELETE', path, settings);
  }

  /**
   * Opens a watch and calls `onEvent` for each event line. Resolves when the server ends the watch
   * (its timeoutSeconds) or the signal aborts; rejects on an error status or a broken connection.
   * A watch that goes silent past `idleMs` is cut: a dead connection must not hang us for ever.
   * client-node's Watch does the streaming (ADR 0013); the rate limit is ours.
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (event: WatchEvent) => void,
    signal: AbortSignal,
    idleMs = 90_000,
  ): Promise<void> {
    if (this.limiter) await this.limiter.take();
    await watchWithClientNode(this.config, path, query, onEvent, signal, idleMs);
  }
}

/** A comparable text of one TLS option (certificates come as Buffers, strings or lists of them). */
function credentialText(value: unknown): string {
  if (value === undefined) return '';
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return `[${value.map(credentialText).join(',')}]`;
  if (typeof value === 'string' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

function withoutUndefined<T extends object>(record: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(record).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) res.destroy(new Error('response too large'));
      else chunks.push(chunk);
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function apiError(status: number, body: unknown, what: string): KubeApiError {
  const record = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const reason = typeof record.reason === 'string' ? record.reason : String(status);
  const message = typeof record.message === 'string' ? record.message : `${what}: HTTP ${status}`;
  return new KubeApiError(status, reason, message, body);
}
