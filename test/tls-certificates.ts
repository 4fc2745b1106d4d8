// Certificates for tests of the agent's HTTPS exec server and the proxy's verification of it, made
// with the real openssl (as an operator would make them, docs/AGENT-INSTALL.md): a CA, and leaf
// certificates it signs for the names given. EC P-256 keys, valid one day.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CertificateAuthority {
  certFile: string;
  keyFile: string;
}

export interface LeafCertificate {
  certFile: string;
  keyFile: string;
}

/** A self-signed CA as `<dir>/<name>.crt` and `<dir>/<name>.key`. */
export async function makeCa(dir: string, name: string): Promise<CertificateAuthority> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    `/CN=${name}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return { certFile, keyFile };
}

/**
 * A server certificate `<dir>/<name>.crt` (key `<dir>/<name>.key`) signed by `ca`, for `names`:
 * IP addresses and DNS names, as its subjectAltName.
 */
export async function makeLeaf(
  dir: string,
  name: string,
  ca: CertificateAuthority,
  names: string[],
): Promise<LeafCertificate> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  const csrFile = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  const altNames = names.map((one) => (/^[\d.]+$|:/.test(one) ? `IP:${one}` : `DNS:${one}`));
  await writeFile(
    extFile,
    `subjectAltName=${altNames.join(',')}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  await run('openssl', [
    'req',
    '-new',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    keyFile,
    '-out',
    csrFile,
    '-subj',
    `/CN=${name}`,
  ]);
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csrFile,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-set_serial',
    `0x${Math.floor(Math.random() * 2 ** 48).toString(16)}`,
    '-days',
    '1',
    '-extfile',
    extFile,
    '-out',
    certFile,
  ]);
  return { certFile, keyFile };
}
