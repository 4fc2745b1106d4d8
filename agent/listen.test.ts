import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ListenError, listen } from './listen.js';

const servers: Server[] = [];
const hello = (_request: unknown, response: { end(text: string): void }) => response.end('hello');
const local = (port: number) => ({
  host: '127.0.0.1',
  port,
  what: 'the local leasing API',
  setting: 'local.port (--local-port)',
});

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))),
  );
});

describe('listen', () => {
  it('answers a server that listens, on the port it asked for', async () => {
    const server = await listen(hello, local(0));
    servers.push(server);
    const address = server.address();
    if (typeof address !== 'object' || !address) throw new Error('no address');
    const answer = await fetch(`http://127.0.0.1:${address.port}/`);
    expect(await answer.text()).toBe('hello');
  });

  it('rejects a port that is taken, naming the address and the setting to change', async () => {
    const first = await listen(hello, local(0));
    servers.push(first);
    const { port } = first.address() as { port: number };
    const second = listen(hello, local(port));
    await expect(second).rejects.toBeInstanceOf(ListenError);
    await expect(second).rejects.toThrow(
      `cannot listen on 127.0.0.1:${port} for the local leasing API: the port is in use (by another agent?) (EADDRINUSE); set local.port (--local-port) to another port`,
    );
  });

  it('rejects an address no interface has', async () => {
    // 192.0.2.0/24 is TEST-NET-1: never assigned to a host.
    const target = { ...local(0), host: '192.0.2.1', what: 'the exec server' };
    await expect(listen(hello, target)).rejects.toThrow(
      'cannot listen on 192.0.2.1:0 for the exec server: no interface of this host has that address (EADDRNOTAVAIL)',
    );
  });
});
