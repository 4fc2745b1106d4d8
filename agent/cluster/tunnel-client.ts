// The agent's tunnel to the exec proxy (ADR 0024), for a host behind NAT: one long-lived WebSocket
// out to the proxy, authenticated with the agent's own bearer token (the one its kubeconfig gives
// for the API server). Every stream the proxy opens over it is handed to the agent's exec server
// as a connection, so the exec server and its TokenReview of the proxy are the same as on a port.
// Lost, it connects again after a backoff; connected or not is said in the Worker status and in
// `simlock_agent_tunnel_connected`.
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { Gauge, type Registry } from 'prom-client';
import { WebSocket } from 'ws';
import {
  TUNNEL_PROXY_HEADER as PROXY_HEADER,
  tunnelPath,
  type WorkerTunnel,
} from '../../api/index.js';
import { TunnelClosedError, TunnelMux, type Logger } from '../../runtime/index.js';

export interface AgentTunnelOptions {
  /** The proxy's base URL (https://… or wss://…). */
  url: string;
  /** The CA (PEM file) that signed the proxy's certificate, read at each connect; else the system's. */
  caFile?: string;
  worker: string;
  /** The bearer token to present, read again at each connect (it rotates). */
  token: () => Promise<string | undefined>;
  /** The exec server: each stream of the tunnel becomes one of its connections. */
  server: Server;
  log: Logger;
  /** Connected, lost, refused: for the Worker status and the metric. */
  onState: (state: WorkerTunnel) => void;
  /** First and longest wait between tries. */
  backoff?: { initialMs: number; maxMs: number };
  /** No ping from the proxy for this long: the connection is taken as dead (a NAT forgot it). */
  silenceMs?: number;
  now?: () => Date;
}

export class AgentTunnel {
  private socket: WebSocket | undefined;
  private mux: TunnelMux | undefined;
  private stopped = false;
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  private silence: NodeJS.Timeout | undefined;
  /** When the tunnel was lost (kept across failed tries, so the status is not rewritten each). */
  private lostSince: string | undefined;

  constructor(private readonly options: AgentTunnelOptions) {}

  get connected(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  start(): void {
    this.options.onState({ connected: false, message: 'connecting' });
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.silence);
    this.socket?.close(1001, 'the agent is stopping');
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let token: string | undefined;
    try {
      token = await this.options.token();
    } catch (error) {
      return this.lost(`no token: ${(error as Error).message}`);
    }
    if (!token) return this.lost('the kubeconfig gives no bearer token to present to the proxy');
    let ca: string | undefined;
    if (this.options.caFile !== undefined) {
      try {
        ca = await readFile(this.options.caFile, 'utf8');
      } catch (error) {
        return this.lost(`cannot read tunnel.caFile: ${(error as Error).message}`);
      }
    }
    const base = new URL(this.options.url);
    base.protocol = base.protocol === 'https:' || base.protocol === 'wss:' ? 'wss:' : 'ws:';
    const url = new URL(tunnelPath(this.options.worker), base);
    const socket = new WebSocket(url, {
      headers: { authorization: `Bearer ${token}` },
      handshakeTimeout: 15_000,
      perMessageDeflate: false,
      ...(ca !== undefined ? { ca } : {}),
    });
    this.socket = socket;
    let refusal: string | undefined;
    // The replica that answered names itself: the others forward this worker's execs to it.
    let replica: string | undefined;
    socket.on('upgrade', (res) => {
      const named = res.headers[PROXY_HEADER];
      replica = typeof named === 'string' ? named.slice(0, 512) : undefined;
    });
    socket.on('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text = (text + chunk).slice(0, 2048)));
      res.on('end', () => {
        refusal = `the proxy refused the tunnel: HTTP ${res.statusCode ?? '?'} ${errorMessage(text)}`;
        socket.terminate();
      });
    });
    socket.on('open', () => {
      this.failures = 0;
      this.lostSince = undefined;
      const mux = new TunnelMux((frame) => socket.send(frame), {
        side: 'acceptor',
        onStream: (stream) => this.options.server.emit('connection', stream),
      });
      this.mux = mux;
      this.heard();
      this.options.log.info('tunnel connected', { url: url.origin });
      this.options.onState({
        connected: true,
        since: this.now(),
        ...(replica ? { proxy: replica } : {}),
      });
    });
    socket.on('ping', () => this.heard());
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.mux?.receive(data);
    });
    socket.on('error', (error) => {
      refusal ??= error.message;
    });
    socket.on('close', (code, reason) => {
      clearTimeout(this.silence);
      const wasOpen = this.mux !== undefined;
      this.mux?.close(new TunnelClosedError('the tunnel to the proxy closed'));
      this.mux = undefined;
      if (this.socket === socket) this.socket = undefined;
      this.lost(
        refusal ??
          (wasOpen
            ? `the connection closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`
            : 'the connection failed'),
      );
    });
  }

  /** The proxy pings: the connection lives. */
  private heard(): void {
    clearTimeout(this.silence);
    const socket = this.socket;
    this.silence = setTimeout(() => {
      this.options.log.warn('tunnel silent: connecting again');
      socket?.terminate();
    }, this.options.silenceMs ?? 45_000);
  }

  private lost(message: string): void {
    if (this.stopped) return;
    const backoff = this.options.backoff ?? { initialMs: 500, maxMs: 30_000 };
    const wait = Math.min(backoff.maxMs, backoff.initialMs * 2 ** this.failures);
    this.failures = Math.min(this.failures + 1, 20);
    // Jitter: a proxy restart does not bring every agent back in the same instant.
    const delay = Math.round(wait * (0.5 + Math.random() / 2));
    this.options.log.warn('tunnel not connected; trying again', { message, inMs: delay });
    this.lostSince ??= this.now();
    this.options.onState({
      connected: false,
      since: this.lostSince,
      message: message.slice(0, 512),
    });
    clearTimeout(this.retry);
    this.retry = setTimeout(() => void this.connect(), delay);
  }

  private now(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }
}

/** The message of a simlock error body, or the text itself. */
function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') return parsed.error.message;
  } catch {
    // not JSON
  }
  return text.slice(0, 256);
}

/** `simlock_agent_tunnel_connected`: 1 while the tunnel is up, read at each scrape. */
export function tunnelMetric(registry: Registry, tunnel: AgentTunnel): void {
  new Gauge({
    name: 'simlock_agent_tunnel_connected',
    help: 'Whether the tunnel to the exec proxy is connected (1) or not (0).',
    registers: [registry],
    collect() {
      this.set(tunnel.connected ? 1 : 0);
    },
  });
}
