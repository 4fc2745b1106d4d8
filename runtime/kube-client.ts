// A small Kubernetes REST client over the credentials of a kubeconfig. client-node loads the
// kubeconfig and applies its credentials (certificates, tokens, exec plugins); requests and watches
// go through node:https so that timeouts, aborts and streaming are ours to control (ADR 0002).
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { KubeConfig } from '@kubernetes/client-node';

export interface KubeConfigOptions {
  kubeconfig?: string | undefined;
  context?: string | undefined;
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

export class KubeClient {
  readonly server: string;
  readonly namespace: string;
  private observers: RequestObserver[] = [];

  constructor(
    readonly config: KubeConfig,
    private readonly defaultTimeoutMs = 30_000,
  ) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new KubeUnavailableError('the kubeconfig has no current cluster');
    this.server = cluster.server;
    this.namespace = config.getContextObject(config.getCurrentContext())?.namespace ?? 'default';
  }

  static fromOptions(options: KubeConfigOptions = {}, timeoutMs?: number): KubeClient {
    return new KubeClient(loadKubeConfig(options), timeoutMs);
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
    stream: boolean,
  ): Promise<IncomingMessage> {
    const url = new URL(path, this.server);
    for (const [key, value] of Object.entries(settings.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const options: RequestOptions = { method, headers: { accept: 'application/json' } };
    await this.config.applyToHTTPSOptions(options);
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
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { ...options, signal: settings.signal }, (res) => {
        if (!stream) req.setTimeout(0);
        resolve(res);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (error) =>
        reject(
          settings.signal?.aborted
            ? error
            : new KubeUnavailableError(`${method} ${url.pathname}: ${error.message}`, {
                cause: error,
              }),
        ),
      );
      req.end(payload);
    });
  }

  /** One request; answers the parsed JSON body, or throws KubeApiError / KubeUnavailableError. */
  async request(method: string, path: string, settings: RequestSettings = {}): Promise<unknown> {
    const res = await this.open(method, path, settings, false);
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
   */
  async watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (event: { type: string; object: unknown }) => void,
    signal: AbortSignal,
    idleMs = 90_000,
  ): Promise<void> {
    const res = await this.open('GET', path, { query: { ...query, watch: true }, signal }, true);
    const status = res.statusCode ?? 0;
    if (status >= 400) throw apiError(status, safeJson(await readBody(res)), `watch ${path}`);
    await new Promise<void>((resolve, reject) => {
      let buffered = '';
      let idle = setTimeout(() => res.destroy(new Error(`watch idle for ${idleMs} ms`)), idleMs);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        clearTimeout(idle);
        idle = setTimeout(() => res.destroy(new Error(`watch idle for ${idleMs} ms`)), idleMs);
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line.length === 0) continue;
          const event = safeJson(line);
          if (isWatchEvent(event)) onEvent(event);
        }
      });
      res.on('end', () => {
        clearTimeout(idle);
        resolve();
      });
      res.on('error', (error) => {
        clearTimeout(idle);
        if (signal.aborted) resolve();
        else reject(new KubeUnavailableError(`watch ${path}: ${error.message}`, { cause: error }));
      });
      res.on('close', () => {
        clearTimeout(idle);
        resolve();
      });
    });
  }
}

function isWatchEvent(value: unknown): value is { type: string; object: unknown } {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { type?: unknown }).type === 'string' &&
    'object' in value
  );
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
