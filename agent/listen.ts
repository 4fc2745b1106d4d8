// How the agent's two servers (the exec server and the local leasing API) take their port. A port
// that cannot be had is an error that names it: express 5's `app.listen(port, host, callback)`
// hands a bind failure such as EADDRINUSE to the callback, so a callback that ignores its argument
// went on as if listening, and an agent ran without its exec server or local API, saying nothing.
import { createServer, type RequestListener, type Server } from 'node:http';

/** A server of the agent could not listen: `message` names the address and what to change. */
export class ListenError extends Error {}

export interface ListenTarget {
  host: string;
  port: number;
  /** What listens there, and the setting that moves it: shown in the error. */
  what: string;
  setting: string;
}

/**
 * Listens with `handler` (an express app is one) on a plain HTTP server, or on `server` when given
 * (the exec server over HTTPS, exec-tls.ts); rejects with a ListenError when it cannot.
 */
export function listen(
  handler: RequestListener,
  target: ListenTarget,
  server: Server = createServer(handler),
): Promise<Server> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, target));
    server.once('error', failed);
    server.listen(target.port, target.host, () => {
      server.off('error', failed);
      resolve(server);
    });
  });
}

function listenError(error: NodeJS.ErrnoException, target: ListenTarget): ListenError {
  const address = `${target.host}:${target.port}`;
  const why =
    error.code === 'EADDRINUSE'
      ? 'the port is in use (by another agent?)'
      : error.code === 'EADDRNOTAVAIL'
        ? 'no interface of this host has that address'
        : error.code === 'EACCES'
          ? 'not allowed to listen there'
          : error.message;
  return new ListenError(
    `cannot listen on ${address} for ${target.what}: ${why} (${error.code ?? 'error'}); ` +
      `set ${target.setting} to another port`,
    { cause: error },
  );
}
