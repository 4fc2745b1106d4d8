// A host that can be cut off from the API server, for tests of partitions: a network namespace of
// the test's own with a veth pair on addresses of its own (198.18.0.0/15, the range set aside for
// network tests), and a relay in the test process from the host side of the pair to the API
// server on loopback. More relays on the same address reach other servers of the test (an exec
// proxy: `relayTo`). A process run inside the namespace reaches the host only through these
// relays, and nothing on the host reaches it but by the pair; `cut()` takes the host side of the
// pair down, so its packets are dropped (its connections hang, as over a dead network, rather
// than being refused), and `heal()` brings it back. Nothing but loopback and the pair's own
// addresses is ever a target. Needs root and iproute2.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { Relay } from './relay.js';

const run = promisify(execFile);

/** Why partitions cannot be made here, or undefined when they can. */
export async function partitionsUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'cutting a host off needs root (network namespaces)';
  try {
    await run('ip', ['netns', 'list']);
    return undefined;
  } catch {
    return "cutting a host off needs iproute2's `ip netns` (apt-get install iproute2)";
  }
}

/** The addresses of the pair for the index-th partition of this run. */
export function pairAddresses(index: number): { host: string; inside: string } {
  // One /30 per partition inside 198.18.0.0/15: .1 on the host side, .2 inside.
  const third = Math.floor(index / 64);
  const fourth = (index % 64) * 4;
  return { host: `198.18.${third}.${fourth + 1}`, inside: `198.18.${third}.${fourth + 2}` };
}

/**
 * A pair index of this process's own, for a test that need not know its addresses before it
 * starts (its relays name the API server by a name its certificate bears: `kubeconfigThrough`'s
 * `serverName`): above the small fixed ones (the reliability test's 0, the soak's first few) and
 * apart from other test processes running at once.
 */
export function processPairIndex(): number {
  return 64 + (process.pid % 16_000);
}

interface KubeconfigFile {
  clusters?: { cluster?: Record<string, unknown> }[];
}

export class NetworkPartition {
  private constructor(
    private readonly sockets: Set<Socket>,
    readonly namespace: string,
    private readonly hostSide: string,
    /** The host side's address: every relay listens there. */
    readonly address: string,
    /** The namespace's address on the pair: where the host would reach a process inside. */
    readonly inside: string,
    private readonly relay: Server,
    /** The port of the relay to the API server. */
    readonly port: number,
  ) {}

  private readonly relays: Relay[] = [];

  /**
   * Makes the namespace and the pair, and a relay on the pair's host address to `target` (the API
   * server's loopback port). `index` keeps the addresses of partitions in one run apart.
   */
  static async create(index: number, target: { port: number }): Promise<NetworkPartition> {
    const tag = `${process.pid % 10_000}x${index}`;
    const namespace = `simlock-${tag}`;
    const hostSide = `slh${tag}`;
    const insideSide = `sln${tag}`;
    const { host, inside } = pairAddresses(index);
    // The same address on two pairs would route one namespace's packets into the other's: said,
    // rather than found as a hung test.
    const { stdout: taken } = await run('ip', ['-o', '-4', 'addr', 'show', 'to', `${host}/32`]);
    if (taken.trim().length > 0) {
      throw new Error(
        `pair address ${host} is in use (another test's partition, or one left over: ip netns list): ${taken.trim()}`,
      );
    }
    const steps: string[][] = [
      ['netns', 'add', namespace],
      ['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', insideSide],
      ['link', 'set', insideSide, 'netns', namespace],
      ['addr', 'add', `${host}/30`, 'dev', hostSide],
      ['link', 'set', hostSide, 'up'],
      ['netns', 'exec', namespace, 'ip', 'addr', 'add', `${inside}/30`, 'dev', insideSide],
      ['netns', 'exec', namespace, 'ip', 'link', 'set', insideSide, 'up'],
      ['netns', 'exec', namespace, 'ip', 'link', 'set', 'lo', 'up'],
    ];
    try {
      for (const step of steps) await run('ip', step);
    } catch (error) {
      await removeNamespace(namespace, hostSide);
      throw new Error(`could not make network namespace ${namespace}: ${(error as Error).message}`);
    }
    const sockets = new Set<Socket>();
    const relay = createServer((incoming) => {
      const outgoing = connect(target.port, '127.0.0.1');
      for (const socket of [incoming, outgoing]) {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        socket.on('error', () => {
          incoming.destroy();
          outgoing.destroy();
        });
      }
      incoming.pipe(outgoing);
      outgoing.pipe(incoming);
    });
    const port = await new Promise<number>((resolve, reject) => {
      relay.once('error', reject);
      relay.listen(0, host, () => {
        const address = relay.address();
        resolve(typeof address === 'object' && address ? address.port : 0);
      });
    });
    return new NetworkPartition(sockets, namespace, hostSide, host, inside, relay, port);
  }

  /**
   * One more relay on the host side of the pair, to a server on the host's loopback `port` (an
   * exec proxy): what a process inside dials to reach it. A Relay, so a test can also refuse or
   * silence this way alone (the API server stays reachable); cut() drops it with the rest.
   */
  async relayTo(port: number): Promise<Relay> {
    const relay = await Relay.start(port, this.address);
    this.relays.push(relay);
    return relay;
  }

  /** The command prefix that runs a process inside the namespace. */
  get commandPrefix(): string[] {
    return ['ip', 'netns', 'exec', this.namespace];
  }

  /**
   * A copy of `kubeconfigPath` whose server is the relay to the API server. The API server's
   * certificate must name the pair's host address, or `serverName` must be a name it bears (a
   * kubeconfig's `tls-server-name`, as for a cluster reached by an address its certificate does
   * not name): the run's shared control plane names only loopback and `localhost`.
   */
  async kubeconfigThrough(
    kubeconfigPath: string,
    options: { serverName?: string } = {},
  ): Promise<string> {
    const config = parse(await readFile(kubeconfigPath, 'utf8')) as KubeconfigFile;
    for (const { cluster } of config.clusters ?? []) {
      if (typeof cluster?.server !== 'string') continue;
      if (!/^https:\/\/127\.0\.0\.1:\d+$/.test(cluster.server)) continue;
      cluster.server = `https://${this.address}:${this.port}`;
      if (options.serverName) cluster['tls-server-name'] = options.serverName;
    }
    const path = `${kubeconfigPath}.${this.namespace}`;
    await writeFile(path, stringify(config), { mode: 0o600 });
    return path;
  }

  /** Drops every packet between the namespace and the host, until heal(). */
  async cut(): Promise<void> {
    await run('ip', ['link', 'set', this.hostSide, 'down']);
  }

  async heal(): Promise<void> {
    await run('ip', ['link', 'set', this.hostSide, 'up']);
  }

  async remove(): Promise<void> {
    for (const relay of this.relays) await relay.close();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.relay.close(() => resolve()));
    await removeNamespace(this.namespace, this.hostSide);
  }
}

async function removeNamespace(namespace: string, hostSide: string): Promise<void> {
  await run('ip', ['netns', 'del', namespace]).catch(() => undefined);
  // Deleting the namespace deletes the pair; this is for a pair made before the move failed.
  await run('ip', ['link', 'del', hostSide]).catch(() => undefined);
}
