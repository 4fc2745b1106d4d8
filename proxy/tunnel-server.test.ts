// A stopping proxy lets its tunnels go once no exec runs through them (closeWhenIdle): a held
// tunnel would otherwise keep the server open until the pod is killed, and an exec under way is
// not cut.
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { TunnelMux } from '../runtime/index.js';
import { AgentTunnels } from './tunnel-server.js';

/** The proxy's end of a tunnel; the socket keeps the close it was asked for. */
function heldTunnel() {
  const closes: { code: number; reason: string }[] = [];
  const socket = {
    close: (code: number, reason: string) => closes.push({ code, reason }),
  } as unknown as WebSocket;
  const mux = new TunnelMux(() => undefined, { side: 'opener', onStream: () => undefined });
  return { mux, socket, closes };
}

describe('AgentTunnels.closeWhenIdle', () => {
  it('closes an idle tunnel at once, and a busy one when its exec ends', async () => {
    const tunnels = new AgentTunnels();
    const idle = heldTunnel();
    const busy = heldTunnel();
    tunnels.hold('mac-mini-1', idle.mux, idle.socket);
    tunnels.hold('mac-mini-2', busy.mux, busy.socket);
    const exec = busy.mux.open();

    let done = false;
    // Its first pass runs before it waits.
    const closing = tunnels.closeWhenIdle(10).then(() => (done = true));
    expect(idle.closes).toEqual([{ code: 1001, reason: 'the proxy is stopping' }]);
    expect(busy.closes).toEqual([]);
    expect(tunnels.workers()).toEqual(['mac-mini-2']);
    expect(done).toBe(false);

    exec.destroy();
    await closing;
    expect(busy.closes).toEqual([{ code: 1001, reason: 'the proxy is stopping' }]);
    expect(tunnels.workers()).toEqual([]);
  });
});
