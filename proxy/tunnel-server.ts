// Agents' tunnels (ADR 0024): an agent behind NAT connects out to GET /v1/workers/{name}/tunnel
// (a WebSocket upgrade) with its own bearer token. The proxy asks the API server who that is
// (TokenReview: none or not accepted, 401) and whether it may serve that worker (a
// SubjectAccessReview of `create workers/tunnel` on it: not, 403), then holds the connection as
// that worker's route: agent-dial.ts opens a stream over it per exec.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { SimlockError, httpStatusFor, tunnelAccess } from '../api/index.js';
import { PROXY_HEADER } from './tunnel-forward.js';
import {
  bearerToken,
  reviewToken,
  subjectMay,
  TunnelClosedError,
  TunnelMux,
  type KubeClient,
  type Logger,
} from '../runtime/index.js';

const TUNNEL_ROUTE = /^\/v1\/workers\/([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?)\/tunnel$/;
/** A tunnel whose agent answers no ping for this long is dropped (a NAT that forgot it). */
export const TUNNEL_PING_MS = 15_000;
/** Frames larger than this are refused: a data frame carries at most 64 KiB. */
const MAX_MESSAGE_BYTES = 128 * 1024;

/** The tunnels this proxy holds, by worker name. */
export class AgentTunnels {
  private readonly byWorker = new Map<string, { mux: TunnelMux; socket: WebSocket }>();

  /** How many workers' tunnels are held (ProxyMetrics.watchTunnels reads it at a scrape). */
  get size(): number {
    return this.byWorker.size;
  }

  get(worker: string): TunnelMux | undefined {
    const held = this.byWorker.get(worker);
    return held && !held.mux.closed ? held.mux : undefined;
  }

  workers(): string[] {
    return [...this.byWorker.keys()];
  }

  /** A newer connection of the same worker replaces the older (the agent reconnected). */
  hold(worker: string, mux: TunnelMux, socket: WebSocket): void {
    const older = this.byWorker.get(worker);
    this.byWorker.set(worker, { mux, socket });
    if (older) older.socket.close(4000, 'replaced by a newer tunnel of this worker');
  }

  release(worker: string, mux: TunnelMux): void {
    if (this.byWorker.get(worker)?.mux === mux) this.byWorker.delete(worker);
  }

  closeAll(): void {
    for (const { socket } of this.byWorker.values()) socket.terminate();
    this.byWorker.clear();
  }

  /**
   * The proxy is stopping: each tunnel is closed once no exec runs through it, and its agent
   * connects again (through the Service, to a replica that stays). Without this a held tunnel
   * keeps the server open (an upgraded socket is one of its connections) until the pod is killed.
   */
  async closeWhenIdle(pollMs = 200): Promise<void> {
    while (this.byWorker.size > 0) {
      for (const [worker, { mux, socket }] of this.byWorker) {
        if (mux.openStreams > 0) continue;
        socket.close(1001, 'the proxy is stopping');
        this.byWorker.delete(worker);
      }
      if (this.byWorker.size > 0) await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}

export interface TunnelServerOptions {
  client: KubeClient;
  log: Logger;
  tunnels: AgentTunnels;
  pingMs?: number;
  /** This replica's URL for the other replicas, said to each agent in the upgrade answer. */
  advertiseUrl?: string | undefined;
}

/** Serves the tunnel route on `server`'s upgrades; any other upgrade is refused. */
export function serveTunnels(server: Server, options: TunnelServerOptions): WebSocketServer {
  const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const advertised = options.advertiseUrl;
  if (advertised)
    sockets.on('headers', (headers) => headers.push(`${PROXY_HEADER}: ${advertised}`));
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    admit(options, req)
      .then((worker) => {
        sockets.handleUpgrade(req, socket, head, (ws) => carry(options, worker, ws));
      })
      .catch((error: unknown) => {
        const refusal =
          error instanceof SimlockError
            ? error
            : new SimlockError('UNAVAILABLE', 'the API server could not be reached');
        if (!(error instanceof SimlockError))
          options.log.warn('tunnel refused: review failed', { error });
        refuse(socket, refusal);
      });
  });
  server.on('close', () => {
    options.tunnels.closeAll();
    sockets.close();
  });
  return sockets;
}

/** The worker this connection may serve, or a SimlockError saying why not. */
async function admit(options: TunnelServerOptions, req: IncomingMessage): Promise<string> {
  const worker = TUNNEL_ROUTE.exec(new URL(req.url ?? '/', 'http://proxy').pathname)?.[1];
  if (!worker) throw new SimlockError('NOT_FOUND', 'no such upgrade route');
  const token = bearerToken(req.headers.authorization);
  if (!token) throw new SimlockError('UNAUTHENTICATED', 'a bearer token is required');
  const caller = await reviewToken(options.client, token);
  if (!caller) throw new SimlockError('UNAUTHENTICATED', 'the token was not accepted');
  if (!(await subjectMay(options.client, caller, tunnelAccess(worker)))) {
    options.log.warn('tunnel refused: not this worker’s agent', {
      worker,
      caller: caller.username,
    });
    throw new SimlockError(
      'FORBIDDEN',
      `${caller.username} may not create workers/tunnel on ${worker}`,
    );
  }
  options.log.info('tunnel admitted', { worker, caller: caller.username });
  return worker;
}

function refuse(socket: Duplex, error: SimlockError): void {
  const status = httpStatusFor(error.code);
  const body = JSON.stringify(error.toJSON());
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Refused'}\r\n` +
      `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`,
  );
}

/** Holds an admitted connection as the worker's route until it closes or stops answering pings. */
function carry(options: TunnelServerOptions, worker: string, ws: WebSocket): void {
  const mux = new TunnelMux((frame) => ws.send(frame), { side: 'opener' });
  options.tunnels.hold(worker, mux, ws);
  let alive = true;
  ws.on('pong', () => (alive = true));
  const ping = setInterval(() => {
    if (!alive) {
      options.log.warn('tunnel dropped: no answer to a ping', { worker });
      ws.terminate();
      return;
    }
    alive = false;
    ws.ping();
  }, options.pingMs ?? TUNNEL_PING_MS);
  ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) mux.receive(data);
  });
  ws.on('error', (error) => options.log.warn('tunnel error', { worker, error }));
  ws.on('close', () => {
    clearInterval(ping);
    mux.close(new TunnelClosedError(`the tunnel of ${worker} closed`));
    options.tunnels.release(worker, mux);
    options.log.info('tunnel closed', { worker });
  });
}
