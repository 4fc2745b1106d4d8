// What @kubernetes/client-node 2.x does, measured against the real API server, where runtime/
// relies on it or keeps its own code instead (ADR 0013). A relay in front of the API server makes
// the network fail: it goes silent (a dead network) or refuses (an API server restarting).
//   - client-node's Watch cuts a silent connection after its idle limit: runtime's watch is it.
//   - client-node's informer stops for good after a failure other than 410 (it calls its error
//     handlers and never lists or watches again); runtime's Informer lists again and goes on.
//   - client-node's typed calls have no timeout of their own past the TLS handshake: from a server
//     that never answers, a call is still waiting long after runtime's request has given up.
//   - client-node gives each typed call a dispatcher of its own, so each opens a new TLS
//     connection; runtime's requests share one keep-alive pool.
// If a test here fails because client-node now does what runtime needs, ADR 0013 is out of date:
// move that part onto client-node.
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Informer, KubeClient, KubeUnavailableError, type KubeObject } from '../runtime/index.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { Relay } from '../test/cluster/relay.js';

const cluster = useCluster('client-node');
const relays: Relay[] = [];
const apiServerPort = () => Number(new URL(cluster.admin.server).port);

async function relayed(): Promise<{ relay: Relay; kubeconfig: string }> {
  const relay = await Relay.start(apiServerPort());
  relays.push(relay);
  return { relay, kubeconfig: await relay.kubeconfigThrough(cluster.kubeconfigPath) };
}

function clientNodeConfig(kubeconfig: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  return config;
}

const configMaps = () => `/api/v1/namespaces/${cluster.namespace}/configmaps`;
async function createConfigMap(name: string): Promise<void> {
  await cluster.admin.create(configMaps(), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { made: 'by the test' },
  });
}

/** Polls `holds` for `forMs`; fails as soon as it does not hold. */
async function holdsThroughout(holds: () => boolean, forMs: number, what: string): Promise<void> {
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    if (!holds()) throw new Error(`${what} stopped holding`);
    await delay(100);
  }
}

beforeAll(async () => {
  await createConfigMap('before');
});
afterAll(async () => {
  for (const relay of relays) await relay.close();
});

describe('client-node 2.x against the real API server', () => {
  it("cuts a watch that goes silent after the idle limit (runtime's watch is client-node's)", async () => {
    const { relay, kubeconfig } = await relayed();
    const client = KubeClient.fromOptions({ kubeconfig });
    const seen: string[] = [];
    const controller = new AbortController();
    const started = Date.now();
    const ended = client
      .watch(
        configMaps(),
        { timeoutSeconds: 300 },
        (event) => seen.push(event.type),
        controller.signal,
        1_500,
      )
      .then(
        () => 'ended without an error',
        (error: unknown) => error,
      );
    await eventually(() => (seen.includes('ADDED') ? true : undefined), { what: 'ADDED' });
    relay.silence();
    const silencedAt = Date.now();
    const outcome = await Promise.race([ended, delay(20_000, 'still open after 20 s')]);
    controller.abort();
    expect(outcome).toBeInstanceOf(KubeUnavailableError);
    expect(String((outcome as Error).message)).toContain('idle for 1500 ms');
    // Cut for its silence, not at once: the events before kept it open.
    expect(Date.now() - silencedAt).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it("stops its informer for good after a failure other than 410; runtime's lists again", async () => {
    const theirs = await relayed();
    const ours = await relayed();
    const config = clientNodeConfig(theirs.kubeconfig);
    const api = config.makeApiClient(CoreV1Api);
    const clientNode = makeInformer<V1ConfigMap>(config, configMaps(), () =>
      api.listNamespacedConfigMap({ namespace: cluster.namespace }),
    );
    const clientNodeErrors: unknown[] = [];
    clientNode.on('error', (error) => clientNodeErrors.push(error));
    await clientNode.start();
    const runtimeErrors: unknown[] = [];
    const runtime = new Informer(KubeClient.fromOptions({ kubeconfig: ours.kubeconfig }), {
      path: configMaps(),
      initialBackoffMs: 100,
      maxBackoffMs: 400,
      onError: (error) => runtimeErrors.push(error),
    });
    runtime.start();
    try {
      await runtime.waitForSync();
      const names = () => ({
        clientNode: clientNode.list().map((object) => object.metadata?.name),
        runtime: runtime.list().map((object: KubeObject) => object.metadata.name),
      });
      await eventually(() => (names().clientNode.includes('before') ? true : undefined), {
        what: 'client-node lists',
      });

      // The API server goes away for a moment (as when it restarts), then comes back.
      await Promise.all([theirs.relay.refuse(), ours.relay.refuse()]);
      await eventually(() => (clientNodeErrors.length > 0 ? true : undefined), {
        what: "client-node's error handler",
      });
      await eventually(() => (runtimeErrors.length > 0 ? true : undefined), {
        what: "runtime's error handler",
      });
      const acceptedBefore = theirs.relay.accepted;
      await Promise.all([theirs.relay.reopen(), ours.relay.reopen()]);
      await createConfigMap('after');

      await eventually(() => (names().runtime.includes('after') ? true : undefined), {
        what: "runtime's informer to see the ConfigMap made after the failure",
      });
      // client-node's informer had its chance (its first reconnect waits 1 s): it never comes back.
      await holdsThroughout(
        () => !names().clientNode.includes('after') && theirs.relay.accepted === acceptedBefore,
        5_000,
        "client-node's informer staying stopped",
      );
    } finally {
      await clientNode.stop();
      await runtime.stop();
    }
  });

  it("gives a typed call no timeout of its own; runtime's request gives up after timeoutMs", async () => {
    const { relay, kubeconfig } = await relayed();
    const api = clientNodeConfig(kubeconfig).makeApiClient(CoreV1Api);
    const client = KubeClient.fromOptions({ kubeconfig });
    // Not silence(): undici's connect timeout (10 s) would end a call that cannot even connect.
    relay.leaveUnanswered();
    let clientNodeSettled = false;
    const clientNodeCall = api.readNamespace({ name: cluster.namespace }).finally(() => {
      clientNodeSettled = true;
    });
    clientNodeCall.catch(() => undefined);
    const started = Date.now();
    const ours = await client
      .get(`/api/v1/namespaces/${cluster.namespace}`, { timeoutMs: 1_000 })
      .then(
        () => 'answered',
        (error: unknown) => error,
      );
    expect(ours).toBeInstanceOf(KubeUnavailableError);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Past undici's connect timeout, at 15 times runtime's limit, client-node's call still waits:
    // for undici's headers timeout, 300 s.
    await holdsThroughout(() => !clientNodeSettled, 15_000, "client-node's call pending");
  });

  it("opens a TLS connection per typed call; runtime's requests share one", async () => {
    const theirs = await relayed();
    const ours = await relayed();
    const api = clientNodeConfig(theirs.kubeconfig).makeApiClient(CoreV1Api);
    const client = KubeClient.fromOptions({ kubeconfig: ours.kubeconfig });
    for (let call = 0; call < 20; call += 1) {
      await api.readNamespace({ name: cluster.namespace });
      await client.get(`/api/v1/namespaces/${cluster.namespace}`);
    }
    expect(theirs.relay.accepted).toBe(20);
    expect(ours.relay.accepted).toBe(1);
  });
});
