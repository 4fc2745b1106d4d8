// A TCP relay on loopback in front of the API server, for tests of what a client does when the
// network fails: it forwards, goes silent (bytes are dropped both ways and connections stay open,
// as over a dead network) and heals (new connections get through, the old ones stay dead), leaves
// requests unanswered (new connections finish their TLS handshake, then nothing the client sends
// reaches the server, as with a server that accepts and never answers), or refuses (it stops
// listening and closes what it holds, as an API server restarting does), and counts the
// connections it accepted and the chunks a client sent into the silence (a test waits for one: a
// request stuck on a dead connection, rather than for a while). Only loopback is a target; the relay
// listens on loopback, or on the host side of a network namespace's pair (partition.ts).
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { KubeClient } from '../../runtime/index.js';

export class Relay {
  /** Connections accepted since the relay started. */
  accepted = 0;
  /** Chunks a client sent that were dropped (silent, or on a connection that went dead). */
  droppedFromClient = 0;
  private silent = false;
  private unanswered = false;
  /** Connections open when the relay went silent: they stay dead after heal(). */
  private readonly dead = new Set<Socket>();
  private readonly sockets = new Set<Socket>();
  private server: Server;

  private constructor(
    private readonly target: number,
    readonly host: string,
    readonly port: number,
    server: Server,
  ) {
    this.server = server;
  }

  /**
   * A relay on a free port of `host` (loopback unless said) to the loopback `targetPort` (the API
   * server's, or any server's of the test).
   */
  static async start(targetPort: number, host = '127.0.0.1'): Promise<Relay> {
    const accepting: { relay?: Relay } = {};
    const server = createServer((socket) => accepting.relay?.accept(socket));
    const port = await listen(server, host, 0);
    accepting.relay = new Relay(targetPort, host, port, server);
    return accepting.relay;
  }

  /** Where a client connects, as an http:// URL. */
  get url(): string {
    return `http://${this.host}:${this.port}`;
  }

  private accept(incoming: Socket): void {
    this.accepted += 1;
    const outgoing = connect(this.target, '127.0.0.1');
    const pairs: [Socket, Socket][] = [
      [incoming, outgoing],
      [outgoing, incoming],
    ];
    const requests = this.unanswered ? new UntilApplicationData() : undefined;
    for (const [from, to] of pairs) {
      this.sockets.add(from);
      if (this.silent) this.dead.add(from);
      from.once('close', () => {
        this.sockets.delete(from);
        this.dead.delete(from);
        to.destroy();
      });
      from.on('error', () => from.destroy());
      from.on('data', (chunk: Buffer) => {
        if (this.silent || this.dead.has(from)) {
          if (from === incoming) this.droppedFromClient += 1;
          return;
        }
        const forwarded = from === incoming && requests ? requests.pass(chunk) : chunk;
        if (forwarded.length > 0) to.write(forwarded);
      });
    }
  }

  /** Connections accepted from now on finish their TLS handshake and get no answer. */
  leaveUnanswered(): void {
    this.unanswered = true;
  }

  /** From now on, drops every byte both ways; connections stay open. */
  silence(): void {
    this.silent = true;
    for (const socket of this.sockets) this.dead.add(socket);
  }

  /**
   * After silence(): new connections are forwarded again, while those open during the silence
   * stay dead, bytes dropped, as a TCP connection is after a long partition when its
   * retransmissions have backed off for minutes: only a client that gives up on a request and
   * connects again gets through.
   */
  heal(): void {
    this.silent = false;
  }

  /** Stops listening and closes every connection: new ones are refused until reopen(). */
  async refuse(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Listens again on the same port, forwarding. */
  async reopen(): Promise<void> {
    this.silent = false;
    this.unanswered = false;
    this.server = createServer((socket) => this.accept(socket));
    await listen(this.server, this.host, this.port);
  }

  /** A copy of `kubeconfigPath` whose server is this relay. */
  async kubeconfigThrough(kubeconfigPath: string): Promise<string> {
    const text = await readFile(kubeconfigPath, 'utf8');
    const path = `${kubeconfigPath}.relay-${this.port}`;
    await writeFile(
      path,
      text.replace(
        /server: https:\/\/127\.0\.0\.1:\d+/g,
        `server: https://${this.host}:${this.port}`,
      ),
    );
    return path;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

/**
 * Passes a client's TLS records up to its first application-data record (type 23), and nothing
 * from there on. In TLS 1.3 that first one is the client's Finished: the client counts the
 * handshake done and sends its request, which the server never gets. In TLS 1.2 it is the request.
 */
class UntilApplicationData {
  private pending = Buffer.alloc(0);
  private stopped = false;

  pass(chunk: Buffer): Buffer {
    if (this.stopped) return Buffer.alloc(0);
    this.pending = Buffer.concat([this.pending, chunk]);
    let end = 0;
    while (this.pending.length - end >= 5) {
      if (this.pending[end] === 23) {
        this.stopped = true;
        break;
      }
      const length = 5 + this.pending.readUInt16BE(end + 3);
      if (this.pending.length - end < length) break;
      end += length;
    }
    const passed = this.pending.subarray(0, end);
    this.pending = this.stopped ? Buffer.alloc(0) : this.pending.subarray(end);
    return passed;
  }
}

/** A relay in front of the test cluster's API server, and a client whose every request goes through it. */
export async function clientThroughRelay(cluster: {
  admin: KubeClient;
  kubeconfigPath: string;
}): Promise<{ relay: Relay; client: KubeClient }> {
  const relay = await Relay.start(Number(new URL(cluster.admin.server).port));
  const client = KubeClient.fromOptions({
    kubeconfig: await relay.kubeconfigThrough(cluster.kubeconfigPath),
  });
  return { relay, client };
}
