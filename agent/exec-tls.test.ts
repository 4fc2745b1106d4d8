// The agent's exec server over HTTPS: it serves the certificate it is given, a renewed one from the
// next connection on, keeps the one before when the changed files do not make a pair, and a start
// with files it cannot use names them. Certificates are made with the real openssl.
import { X509Certificate } from 'node:crypto';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../runtime/index.js';
import { makeCa, makeLeaf, type CertificateAuthority } from '../test/tls-certificates.js';
import { TlsFilesError, createTlsServer } from './exec-tls.js';
import { listen } from './listen.js';

let dir: string;
let ca: CertificateAuthority;
const hello = (_request: unknown, response: { end(text: string): void }) => response.end('hello');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'simlock-exec-tls-'));
  ca = await makeCa(dir, 'agents-ca');
}, 30_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The serial number of the certificate a new connection to `port` is served, verified by the CA. */
function servedSerial(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(ca.certFile) }, () => {
      const serial = socket.getPeerCertificate().serialNumber;
      socket.end();
      resolve(serial);
    });
    socket.once('error', reject);
  });
}

function serialOf(certFile: string): string {
  return new X509Certificate(readFileSync(certFile)).serialNumber;
}

async function start(files: { certFile: string; keyFile: string }, lines: string[] = []) {
  const log = createLogger({}, 'info', (line) => lines.push(line));
  const server: Server = await listen(
    hello,
    { host: '127.0.0.1', port: 0, what: 'the exec server', setting: 'listen.port' },
    createTlsServer(hello, files, log),
  );
  return { server, port: (server.address() as { port: number }).port };
}

describe('the exec server over HTTPS', () => {
  it('serves its certificate, and a renewed one from the next connection on', async () => {
    const first = await makeLeaf(dir, 'agent-1', ca, ['127.0.0.1']);
    const served = { certFile: join(dir, 'served.crt'), keyFile: join(dir, 'served.key') };
    await copyFile(first.certFile, served.certFile);
    await copyFile(first.keyFile, served.keyFile);
    const lines: string[] = [];
    const { server, port } = await start(served, lines);
    try {
      expect(await servedSerial(port)).toBe(serialOf(first.certFile));
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, ca: readFileSync(ca.certFile) }, () =>
          socket.end('GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n'),
        );
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('end', () => resolve(text));
        socket.once('error', reject);
      });
      expect(answer).toMatch(/hello$/);

      // Renewed in place, key first and certificate after, as a renewal writes them.
      const second = await makeLeaf(dir, 'agent-2', ca, ['127.0.0.1']);
      await copyFile(second.keyFile, served.keyFile);
      await copyFile(second.certFile, served.certFile);
      expect(await servedSerial(port)).toBe(serialOf(second.certFile));
      expect(lines.some((line) => line.includes('serving the renewed TLS certificate'))).toBe(true);

      // A certificate without its key: the renewed one before still serves, and it is said.
      const third = await makeLeaf(dir, 'agent-3', ca, ['127.0.0.1']);
      await copyFile(third.certFile, served.certFile);
      expect(await servedSerial(port)).toBe(serialOf(second.certFile));
      expect(lines.filter((line) => line.includes('do not make a certificate'))).toHaveLength(1);
      expect(await servedSerial(port)).toBe(serialOf(second.certFile));
      // Said once for the same files.
      expect(lines.filter((line) => line.includes('do not make a certificate'))).toHaveLength(1);
    } finally {
      server.close();
    }
  }, 30_000);

  it('will not start with files it cannot use, naming them', async () => {
    const leaf = await makeLeaf(dir, 'agent-4', ca, ['127.0.0.1']);
    const missing = join(dir, 'nowhere.key');
    expect(() =>
      createTlsServer(hello, { certFile: leaf.certFile, keyFile: missing }, createLogger()),
    ).toThrow(TlsFilesError);
    expect(() =>
      createTlsServer(hello, { certFile: leaf.certFile, keyFile: missing }, createLogger()),
    ).toThrow(`tls.keyFile ${missing}`);
    const other = await makeLeaf(dir, 'agent-5', ca, ['127.0.0.1']);
    expect(() =>
      createTlsServer(hello, { certFile: leaf.certFile, keyFile: other.keyFile }, createLogger()),
    ).toThrow(/key values mismatch/);
  }, 30_000);
});
