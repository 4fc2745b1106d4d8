// The exec proxy's side of e2e/tunnel.test.ts: replicas in the test process, each named by its own
// URL (its --advertise-url), and what a client sees of one: a series of its metrics, and its answer
// to a tunnel upgrade.
import { createServer, type Server } from 'node:http';
import { WebSocket } from 'ws';
import { tunnelPath } from '../api/index.js';
import { AgentTunnels, ProxyMetrics, createProxyApp, serveTunnels } from '../proxy/index.js';
import { silentLogger, type KubeClient } from '../runtime/index.js';

/** One exec proxy replica on loopback; it pings each tunnel every second. */
export async function startReplica(
  client: KubeClient,
  proxyToken: string,
): Promise<{ server: Server; url: string; held: AgentTunnels }> {
  const metrics = new ProxyMetrics();
  const held = new AgentTunnels();
  metrics.watchTunnels(held);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const app = createProxyApp({
    client,
    log: silentLogger,
    agentToken: () => proxyToken,
    tunnels: held,
    advertiseUrl: url,
    metrics,
  });
  server.on('request', app);
  serveTunnels(server, {
    client,
    log: silentLogger,
    tunnels: held,
    pingMs: 1000,
    advertiseUrl: url,
  });
  return { server, url, held };
}

/** The HTTP status the proxy at `url` answers a tunnel upgrade for `worker` with this token. */
export function upgradeStatus(url: string, worker: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(new URL(tunnelPath(worker), url.replace('http', 'ws')), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    socket.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.on('open', () => {
      resolve(101);
      socket.close();
    });
    socket.on('error', (error) => reject(error));
  });
}

/** A series of the proxy's metrics (0 when absent). */
export async function proxySeries(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
