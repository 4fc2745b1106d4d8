// Starts a real control plane for tests and the local fleet: etcd and kube-apiserver on free
// loopback ports, RBAC on, client-certificate users signed by our own CA, service-account tokens.
// Binaries come from build.sh (built once, cached outside the repository).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { auditArgs } from './audit.js';
import { notReady, waitFor } from './readiness.js';
import { promisify } from 'node:util';
import {
  createCertificateAuthority,
  createServiceAccountKey,
  readBase64,
  signCertificate,
} from './certificates.js';

/**
 * How long a restart under load may take to be ready. A restarted kube-apiserver serves at once
 * but is not ready until its rbac/bootstrap-roles hook has checked every bootstrap role, one
 * request after another; on a busy API server that takes minutes (kubernetes/kubernetes#97119;
 * 85 s in the soak at minute 10 on two cores). kubeadm's startup probe allows four minutes.
 */
const RESTART_READY_WITHIN_MS = 240_000;

const buildScript = fileURLToPath(new URL('./build.sh', import.meta.url));

/** Builds the binaries if needed (cold: many minutes) and answers their folder. */
export async function controlPlaneBinaries(): Promise<string> {
  const { stdout } = await promisify(execFile)(buildScript, [], {
    maxBuffer: 1 << 20,
    timeout: 60 * 60 * 1000,
  });
  return stdout.trim().split('\n').at(-1) ?? '';
}

/** The first port of the kernel's ephemeral range (net.ipv4.ip_local_port_range), 32768 if unread. */
function ephemeralLow(): number {
  try {
    const low = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0],
    );
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/** Whether 127.0.0.1:port can be listened on now (tried, then let go). */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port free now on 127.0.0.1, for a process the caller starts next. Picked at random below the
 * kernel's ephemeral range: a port of that range, once let go, can be taken as the source port of
 * any outgoing connection before the process binds it (a whole-suite run opens thousands), and an
 * agent that cannot listen on its port stops (the likely cause of an acceptance fleet's agent
 * that never came up, in one whole-suite run of three). Below the range only another caller of this could take it.
 */
export async function freePort(): Promise<number> {
  const low = 10_000;
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port found on 127.0.0.1 between ${low} and ${high}`);
}

export interface Identity {
  /** A kubeconfig that authenticates as this identity. */
  kubeconfigPath: string;
}

export interface ControlPlane {
  dir: string;
  binDir: string;
  server: string;
  caPath: string;
  /** kubeconfig for the admin (group system:masters). */
  kubeconfigPath: string;
  /** A kubeconfig for a user with a client certificate signed by the cluster's CA. */
  mintUser(user: string, groups?: string[]): Promise<Identity>;
  /** A kubeconfig that carries a bearer token (e.g. a service account's). */
  kubeconfigForToken(name: string, token: string): Promise<Identity>;
  /**
   * Stops kube-apiserver (SIGTERM, as an operator's restart does) and starts it again with the same
   * flags and port; resolves once it is ready. etcd keeps running, so nothing stored is lost:
   * clients see their watches break and requests fail for the few seconds it is down.
   */
  restartApiServer(): Promise<void>;
  /**
   * Stops etcd (SIGTERM) and starts it again on the same data and ports; resolves once
   * kube-apiserver is ready again. Nothing stored is lost; while etcd is away, the API server
   * answers with errors and its watches end.
   */
  restartEtcd(): Promise<void>;
  /**
   * Starts kube-controller-manager with only the garbage collector (ownerReference cascades, e.g. a
   * LeaseRequest owned by a pod, a worker's Lease namespace owned by its Worker) and the namespace
   * controller (it empties and deletes a namespace being deleted), as the admin, no leader
   * election, serving nothing. Resolves once
   * the collector has synced its monitors, so start it after the CRDs whose objects it must see
   * (it rediscovers resources only every 30 s). Stopped by stop(), before kube-apiserver.
   */
  startControllerManager(): Promise<void>;
  stop(): Promise<void>;
}

interface StartOptions {
  /** Where to keep data, certificates and logs; a fresh temporary folder by default. */
  dir?: string;
  log?: (line: string) => void;
  /**
   * More addresses the API server's certificate is valid for (it listens on loopback only): for a
   * test that reaches it through a relay of its own on another address.
   */
  servingAddresses?: string[];
  /**
   * An audit log of every write to these resources (`group/resource`, e.g. simlock.dev/leases) at
   * the Metadata level: who wrote what, when, and the answer's code. For benchmarks that must find
   * out which process made a write.
   */
  auditWrites?: { path: string; resources: string[] };
}

function kubeconfigYaml(server: string, caPath: string, user: Record<string, string>): string {
  const userLines = Object.entries(user)
    .map(([key, value]) => `    ${key}: ${value}`)
    .join('\n');
  return `apiVersion: v1
kind: Config
clusters:
- name: simlock
  cluster:
    server: ${server}
    certificate-authority-data: ${readFileSync(caPath).toString('base64')}
users:
- name: simlock
  user:
${userLines}
contexts:
- name: simlock
  context:
    cluster: simlock
    user: simlock
    namespace: default
current-context: simlock
`;
}

function startProcess(binary: string, args: string[], logPath: string): ChildProcess {
  const logFile = createWriteStream(logPath, { flags: 'a' });
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(logFile);
  child.stderr?.pipe(logFile);
  return child;
}

async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function startControlPlane(options: StartOptions = {}): Promise<ControlPlane> {
  const log = options.log ?? (() => undefined);
  const binDir = await controlPlaneBinaries();
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'simlock-controlplane-')));
  const certs = join(dir, 'pki');
  await mkdir(certs, { recursive: true });

  const ca = await createCertificateAuthority(certs);
  const serving = await signCertificate(certs, ca, 'apiserver', '/CN=kube-apiserver', 'server', [
    'IP:127.0.0.1',
    'DNS:localhost',
    ...(options.servingAddresses ?? []).map((address) => `IP:${address}`),
  ]);
  const admin = await signCertificate(certs, ca, 'admin', '/O=system:masters/CN=admin', 'client');
  const serviceAccountKey = await createServiceAccountKey(certs);

  const [etcdClientPort, etcdPeerPort, apiPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
  const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
  const children: ChildProcess[] = [];
  const exits = new Map<ChildProcess, string>();
  const watchExit = (name: string, child: ChildProcess) => {
    children.push(child);
    child.once('exit', (code, signal) =>
      exits.set(child, `${name} exited (${signal ?? code}); see ${dir}`),
    );
  };

  const stop = async () => {
    for (const child of [...children].reverse()) await stopProcess(child);
    if (!options.dir) await rm(dir, { recursive: true, force: true });
  };

  try {
    const startEtcd = (): ChildProcess => {
      const child = startProcess(
        join(binDir, 'etcd'),
        [
          '--data-dir',
          join(dir, 'etcd'),
          '--listen-client-urls',
          etcdUrl,
          '--advertise-client-urls',
          etcdUrl,
          '--listen-peer-urls',
          peerUrl,
          '--initial-advertise-peer-urls',
          peerUrl,
          '--initial-cluster',
          `default=${peerUrl}`,
          '--unsafe-no-fsync',
          '--log-level',
          'warn',
        ],
        join(dir, 'etcd.log'),
      );
      watchExit('etcd', child);
      return child;
    };
    let etcd = startEtcd();

    const server = `https://127.0.0.1:${apiPort}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${join(dir, 'apiserver-certs')}`,
      `--tls-cert-file=${serving.certificatePath}`,
      `--tls-private-key-file=${serving.keyPath}`,
      `--client-ca-file=${ca.certificatePath}`,
      `--secure-port=${apiPort}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--authorization-mode=RBAC',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${serviceAccountKey.publicPath}`,
      `--service-account-signing-key-file=${serviceAccountKey.privatePath}`,
      '--endpoint-reconciler-type=none',
      '--v=1',
    ];
    if (options.auditWrites) apiserverArgs.push(...(await auditArgs(dir, options.auditWrites)));
    /** Starts kube-apiserver; answers it once /readyz says so, with the story of the wait. */
    const startApiServer = async (
      readyWithinMs = 90_000,
    ): Promise<{ child: ChildProcess; story: string }> => {
      const child = startProcess(
        join(binDir, 'kube-apiserver'),
        apiserverArgs,
        join(dir, 'kube-apiserver.log'),
      );
      watchExit('kube-apiserver', child);
      const story = await waitFor(
        'kube-apiserver',
        () => notReady(server, ca.certificatePath, admin),
        readyWithinMs,
        () => [...exits.values()][0],
      );
      return { child, story };
    };
    let apiserver = (await startApiServer()).child;
    log(`control plane ready at ${server}`);

    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeFile(
      kubeconfigPath,
      kubeconfigYaml(server, ca.certificatePath, {
        'client-certificate-data': await readBase64(admin.certificatePath),
        'client-key-data': await readBase64(admin.keyPath),
      }),
    );

    let identities = 0;
    let controllerManager: ChildProcess | undefined;
    return {
      async startControllerManager() {
        if (controllerManager) return;
        const logPath = join(dir, 'kube-controller-manager.log');
        const child = startProcess(
          join(binDir, 'kube-controller-manager'),
          [
            `--kubeconfig=${kubeconfigPath}`,
            '--controllers=garbage-collector-controller,namespace-controller',
            '--leader-elect=false',
            '--secure-port=0',
            '--v=1',
          ],
          logPath,
        );
        controllerManager = child;
        watchExit('kube-controller-manager', child);
        // The collector says so once every resource's informer has synced; until then it deletes
        // nothing, and a test's deadline would be spent waiting for it.
        await waitFor(
          'kube-controller-manager',
          async () =>
            (await readFile(logPath, 'utf8').catch(() => '')).includes(
              'all resource monitors have synced',
            )
              ? undefined
              : 'its log does not say "all resource monitors have synced" yet',
          60_000,
          () => exits.get(child),
        );
        log('kube-controller-manager (garbage collector) ready');
      },
      async restartApiServer() {
        const stopping = apiserver;
        const start = Date.now();
        await stopProcess(stopping);
        const stopped = Date.now();
        // Its exit is expected: forget it, so it does not read as a death of the control plane.
        exits.delete(stopping);
        children.splice(children.indexOf(stopping), 1);
        const started = await startApiServer(RESTART_READY_WITHIN_MS);
        apiserver = started.child;
        log(
          `kube-apiserver restarted at ${server}: stopped in ${stopped - start} ms, ready ${Date.now() - stopped} ms later (${started.story})`,
        );
      },
      async restartEtcd() {
        const stopping = etcd;
        await stopProcess(stopping);
        exits.delete(stopping);
        children.splice(children.indexOf(stopping), 1);
        etcd = startEtcd();
        // Keep the stopping order (etcd last): it goes before kube-apiserver in the list.
        children.splice(children.indexOf(etcd), 1);
        children.unshift(etcd);
        const story = await waitFor(
          'kube-apiserver after the etcd restart',
          () => notReady(server, ca.certificatePath, admin),
          RESTART_READY_WITHIN_MS,
          () => [...exits.values()][0],
        );
        log(`etcd restarted; kube-apiserver ready at ${server} (${story})`);
      },
      dir,
      binDir,
      server,
      caPath: ca.certificatePath,
      kubeconfigPath,
      async mintUser(user, groups = []) {
        const fileName = `user-${++identities}`;
        const subject = [...groups.map((group) => `/O=${group}`), `/CN=${user}`].join('');
        const pair = await signCertificate(certs, ca, fileName, subject, 'client');
        const path = join(dir, `${fileName}.kubeconfig`);
        await writeFile(
          path,
          kubeconfigYaml(server, ca.certificatePath, {
            'client-certificate-data': await readBase64(pair.certificatePath),
            'client-key-data': await readBase64(pair.keyPath),
          }),
        );
        return { kubeconfigPath: path };
      },
      async kubeconfigForToken(name, token) {
        const path = join(
          dir,
          `token-${++identities}-${name.replace(/[^a-z0-9-]/gi, '_')}.kubeconfig`,
        );
        await writeFile(path, kubeconfigYaml(server, ca.certificatePath, { token }));
        return { kubeconfigPath: path };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
