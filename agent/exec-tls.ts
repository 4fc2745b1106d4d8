// The exec server over HTTPS (docs/adr/0025-agent-tls.md): the certificate and key the config names
// are read at start (an unreadable or mismatched pair stops the agent, naming the files) and read
// again when either file changes, so a renewed certificate (cert-manager, a Secret mounted as files,
// a cron job with openssl) is served without a restart. The files are looked at (one stat each) when
// a connection arrives, before its handshake: the new pair serves that very connection. A pair that
// cannot be loaded then (half written, key and certificate apart) leaves the old one serving, and is
// said once in the log until the files change again.
import { readFileSync, statSync } from 'node:fs';
import type { RequestListener, Server } from 'node:http';
import { createServer } from 'node:https';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import type { Logger } from '../runtime/index.js';

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** The agent's TLS files could not be used at start: the message names them. */
export class TlsFilesError extends Error {}

/** What tells one version of the files from another: the kernel's inode, size and change time. */
function versionOf(files: TlsFiles): string {
  return [files.certFile, files.keyFile]
    .map((file) => {
      const stat = statSync(file);
      return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
    })
    .join('|');
}

function readPair(files: TlsFiles): SecureContextOptions {
  const options = { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
  // Throws when the key does not match the certificate or either is not PEM.
  createSecureContext(options);
  return options;
}

/**
 * An HTTPS server for `handler` with the certificate in `files`, not yet listening (agent/listen.ts
 * listens). Throws a TlsFilesError when the files cannot be read or do not make a pair.
 */
export function createTlsServer(handler: RequestListener, files: TlsFiles, log: Logger): Server {
  let version: string;
  let pair: SecureContextOptions;
  try {
    version = versionOf(files);
    pair = readPair(files);
  } catch (error) {
    throw new TlsFilesError(
      `cannot serve HTTPS with tls.certFile ${files.certFile} and tls.keyFile ${files.keyFile}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const server = createServer(pair, handler);
  let refused: string | undefined;
  // Before the TLS server's own listener, which starts the handshake with the context it has now.
  server.prependListener('connection', () => {
    let now: string;
    try {
      now = versionOf(files);
    } catch (error) {
      if (refused !== 'missing')
        log.warn('the TLS files cannot be read; the certificate loaded before still serves', {
          error,
        });
      refused = 'missing';
      return;
    }
    if (now === version || now === refused) return;
    try {
      server.setSecureContext(readPair(files));
      version = now;
      refused = undefined;
      log.info('serving the renewed TLS certificate', { certFile: files.certFile });
    } catch (error) {
      refused = now;
      log.warn('the changed TLS files do not make a certificate; the one before still serves', {
        error,
      });
    }
  });
  // What an operator looks for when a proxy says it does not trust this agent: the handshake the
  // proxy broke off, before any request (with its token) was sent.
  server.on('tlsClientError', (error: Error) => {
    log.warn(
      'a TLS handshake failed: the caller does not trust this certificate, or speaks no TLS',
      {
        error,
      },
    );
  });
  return server;
}
