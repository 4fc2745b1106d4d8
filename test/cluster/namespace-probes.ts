// What can be seen of a process run inside a partition's network namespace (partition.ts), from
// inside and from the host: the sockets listening in the namespace (as `ss` lists them there), a
// GET on the namespace's own loopback (as a scraper on that host would make), and what the host
// gets when it dials the namespace's address on a port (as an exec proxy would, if it tried).
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The namespace of a NetworkPartition and its address on the pair. */
export interface NamespaceAddress {
  readonly namespace: string;
  readonly inside: string;
}

export interface ListeningSocket {
  protocol: 'tcp' | 'udp';
  /** The local address as `ss` prints it (127.0.0.1, 0.0.0.0, *, [::1], …). */
  address: string;
  port: number;
  /** The processes that hold it. */
  pids: number[];
}

/** Every TCP socket listening and every UDP socket bound in the namespace, with their processes. */
export async function listeningInside(where: NamespaceAddress): Promise<ListeningSocket[]> {
  const { stdout } = await run('ip', ['netns', 'exec', where.namespace, 'ss', '-ltunpH']);
  return stdout
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => {
      // Netid State Recv-Q Send-Q Local:Port Peer:Port Process
      const [protocol = '', , , , local = ''] = line.trim().split(/\s+/);
      const colon = local.lastIndexOf(':');
      return {
        protocol: protocol === 'udp' ? 'udp' : 'tcp',
        address: local.slice(0, colon),
        port: Number(local.slice(colon + 1)),
        pids: [...line.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1])),
      };
    });
}

/** The body of a GET made from inside the namespace (its loopback is its own, not the host's). */
export async function fetchInside(where: NamespaceAddress, url: string): Promise<string> {
  const script =
    'fetch(process.argv[1]).then(async (res) => {' +
    ' if (!res.ok) throw new Error(`HTTP ${res.status}`); process.stdout.write(await res.text()); })';
  const { stdout } = await run(
    'ip',
    ['netns', 'exec', where.namespace, process.execPath, '-e', script, url],
    { timeout: 15_000 },
  );
  return stdout;
}

/**
 * What the host gets dialing the namespace's address on `port`: `refused` (the namespace answered
 * and nothing listens there), `unreachable` (no answer, or no route), or `connected`.
 */
export function dialFromHost(
  where: NamespaceAddress,
  port: number,
): Promise<'connected' | 'refused' | 'unreachable'> {
  return new Promise((resolve) => {
    const socket = connect({ host: where.inside, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('unreachable');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      resolve(error.code === 'ECONNREFUSED' ? 'refused' : 'unreachable');
    });
  });
}
