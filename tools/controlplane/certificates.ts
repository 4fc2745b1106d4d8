// Certificates for the test control plane, minted with the openssl command: one CA that signs the
// API server's serving certificate and every client certificate (admin and test identities).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd });
}

export interface KeyPair {
  certificatePath: string;
  keyPath: string;
}

async function newKey(path: string, cwd: string): Promise<void> {
  await openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', path], cwd);
}

export async function createCertificateAuthority(dir: string): Promise<KeyPair> {
  const keyPath = join(dir, 'ca.key');
  const certificatePath = join(dir, 'ca.crt');
  await newKey(keyPath, dir);
  await openssl(
    [
      'req',
      '-x509',
      '-new',
      '-key',
      keyPath,
      '-days',
      '3650',
      '-subj',
      '/CN=simlock-test-ca',
      '-out',
      certificatePath,
    ],
    dir,
  );
  return { certificatePath, keyPath };
}

/** Signs a certificate; `subject` like "/O=system:masters/CN=admin", `altNames` for servers. */
export async function signCertificate(
  dir: string,
  ca: KeyPair,
  fileName: string,
  subject: string,
  usage: 'client' | 'server',
  altNames: string[] = [],
): Promise<KeyPair> {
  const keyPath = join(dir, `${fileName}.key`);
  const requestPath = join(dir, `${fileName}.csr`);
  const certificatePath = join(dir, `${fileName}.crt`);
  const extensionsPath = join(dir, `${fileName}.ext`);
  await newKey(keyPath, dir);
  await openssl(['req', '-new', '-key', keyPath, '-subj', subject, '-out', requestPath], dir);
  const extensions = [
    'basicConstraints=CA:FALSE',
    'keyUsage=digitalSignature,keyEncipherment',
    `extendedKeyUsage=${usage === 'client' ? 'clientAuth' : 'serverAuth'}`,
    ...(altNames.length > 0 ? [`subjectAltName=${altNames.join(',')}`] : []),
  ];
  await writeFile(extensionsPath, extensions.join('\n') + '\n');
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      requestPath,
      '-CA',
      ca.certificatePath,
      '-CAkey',
      ca.keyPath,
      '-CAcreateserial',
      '-days',
      '3650',
      '-extfile',
      extensionsPath,
      '-out',
      certificatePath,
    ],
    dir,
  );
  return { certificatePath, keyPath };
}

/** The key pair the API server signs service-account tokens with. */
export async function createServiceAccountKey(
  dir: string,
): Promise<{ privatePath: string; publicPath: string }> {
  const privatePath = join(dir, 'sa.key');
  const publicPath = join(dir, 'sa.pub');
  await newKey(privatePath, dir);
  await openssl(['ec', '-in', privatePath, '-pubout', '-out', publicPath], dir);
  return { privatePath, publicPath };
}

export async function readBase64(path: string): Promise<string> {
  return (await readFile(path)).toString('base64');
}
