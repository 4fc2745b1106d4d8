// Real identities for cluster tests, minted in the test process: client certificates signed by the
// control plane's CA (user name = CN, groups = O), and ServiceAccount tokens from the TokenRequest
// API. Each comes as a kubeconfig (for kubectl) and a KubeClient. The control plane itself lives in
// the global-setup process, so this reads its CA from `${controlPlaneDir}/pki`.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { parse, stringify } from 'yaml';
import { KubeClient } from '../../runtime/index.js';
import { signCertificate, type KeyPair } from '../../tools/controlplane/certificates.js';
import { serviceAccountToken } from './service-account-token.js';

export interface TestIdentity {
  /** The user name the API server sees. */
  username: string;
  kubeconfigPath: string;
  client: KubeClient;
}

interface AdminKubeconfig {
  clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
}

let workspace: Promise<{ dir: string; ca: KeyPair }> | undefined;

/**
 * This process's folder inside the control plane's (removed with it at the end of the run), with a
 * private copy of the CA: openssl keeps a serial-number file beside the CA certificate, and test
 * files signing at the same time must not share one.
 */
function identitiesWorkspace(): Promise<{ dir: string; ca: KeyPair }> {
  workspace ??= (async () => {
    const pki = join(inject('controlPlaneDir'), 'pki');
    const dir = join(
      inject('controlPlaneDir'),
      `identities-${process.pid}-${randomBytes(3).toString('hex')}`,
    );
    await mkdir(dir, { recursive: true });
    const ca = { certificatePath: join(dir, 'ca.crt'), keyPath: join(dir, 'ca.key') };
    await copyFile(join(pki, 'ca.crt'), ca.certificatePath);
    await copyFile(join(pki, 'ca.key'), ca.keyPath);
    return { dir, ca };
  })();
  return workspace;
}

let counter = 0;

async function writeKubeconfig(
  dir: string,
  name: string,
  user: Record<string, string>,
): Promise<string> {
  const admin = parse(await readFile(inject('kubeconfigPath'), 'utf8')) as AdminKubeconfig;
  const cluster = admin.clusters[0]?.cluster;
  if (!cluster) throw new Error('the admin kubeconfig names no cluster');
  const path = join(dir, `${name}.kubeconfig`);
  await writeFile(
    path,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'simlock', cluster }],
      users: [{ name: 'simlock', user }],
      contexts: [
        { name: 'simlock', context: { cluster: 'simlock', user: 'simlock', namespace: 'default' } },
      ],
      'current-context': 'simlock',
    }),
    { mode: 0o600 },
  );
  return path;
}

/** A user with a client certificate: CN `username`, one O per group. */
export async function certificateIdentity(
  username: string,
  groups: string[] = [],
): Promise<TestIdentity> {
  for (const part of [username, ...groups]) {
    // openssl -subj separates fields with "/" and escapes with "\".
    if (/[/\\]/.test(part)) throw new Error(`"${part}" cannot be put in a certificate subject`);
  }
  const { dir, ca } = await identitiesWorkspace();
  const fileName = `user-${++counter}`;
  const subject = [...groups.map((group) => `/O=${group}`), `/CN=${username}`].join('');
  const pair = await signCertificate(dir, ca, fileName, subject, 'client');
  const kubeconfigPath = await writeKubeconfig(dir, fileName, {
    'client-certificate-data': (await readFile(pair.certificatePath)).toString('base64'),
    'client-key-data': (await readFile(pair.keyPath)).toString('base64'),
  });
  return {
    username,
    kubeconfigPath,
    client: KubeClient.fromOptions({ kubeconfig: kubeconfigPath }),
  };
}

/**
 * A ServiceAccount's identity: a token from the TokenRequest API, asked by `admin`. The
 * ServiceAccount must exist; `create: true` creates it first.
 */
export async function serviceAccountIdentity(
  admin: KubeClient,
  namespace: string,
  serviceAccount: string,
  options: { create?: boolean; expirationSeconds?: number } = {},
): Promise<TestIdentity> {
  const token = await serviceAccountToken(admin, namespace, serviceAccount, options);
  const { dir } = await identitiesWorkspace();
  const kubeconfigPath = await writeKubeconfig(dir, `sa-${++counter}-${serviceAccount}`, { token });
  return {
    username: `system:serviceaccount:${namespace}:${serviceAccount}`,
    kubeconfigPath,
    client: KubeClient.fromOptions({ kubeconfig: kubeconfigPath }),
  };
}
