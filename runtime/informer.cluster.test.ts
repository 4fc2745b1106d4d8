// The informer against the real API server, through a relay that refuses connections (as an API
// server restarting does): what changed while no watch was open is delivered by the relist, and an
// object deleted and made again under its name meanwhile comes as a delete of the old uid and an add
// of the new one, never as an update of the one into the other.
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { clientThroughRelay } from '../test/cluster/relay.js';
import { Informer, type InformerEvent, type KubeObject } from './informer.js';

const cluster = useCluster('informer');
const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const configMaps = () => `/api/v1/namespaces/${cluster.namespace}/configmaps`;

async function makeConfigMap(name: string, value: string): Promise<string> {
  const made = (await cluster.admin.create(configMaps(), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { value },
  })) as KubeObject;
  return String(made.metadata.uid);
}

/** What a handler was told, as `type name uid value` lines. */
function told(events: InformerEvent<KubeObject>[]): string[] {
  return events.map(({ type, object }) => {
    const value = (object.data as { value?: string } | undefined)?.value ?? '';
    return `${type} ${object.metadata.name} ${String(object.metadata.uid)} ${value}`;
  });
}

describe('informer', () => {
  it('delivers an object replaced under its name while it could not watch as a delete and an add', async () => {
    const { relay, client } = await clientThroughRelay(cluster);
    stops.push(() => relay.close());
    const informer = new Informer(client, {
      path: configMaps(),
      initialBackoffMs: 100,
      maxBackoffMs: 200,
    });
    const events: InformerEvent<KubeObject>[] = [];
    informer.on((event) => {
      if (event.object.metadata.name !== 'kube-root-ca.crt') events.push(event);
    });
    informer.start();
    stops.push(() => informer.stop());
    await informer.waitForSync();

    const first = await makeConfigMap('replaced', 'one');
    const kept = await makeConfigMap('changed', 'one');
    await eventually(() => (events.length === 2 ? true : undefined), { what: 'both added' });

    // No watch while the relay refuses: the changes are seen only by the relist after it.
    await relay.refuse();
    await cluster.admin.delete(`${configMaps()}/replaced`);
    const second = await makeConfigMap('replaced', 'two');
    await cluster.admin.patch(`${configMaps()}/changed`, { data: { value: 'two' } });
    await relay.reopen();

    await eventually(() => (events.length >= 5 ? true : undefined), {
      what: 'the relist delivered',
      timeoutMs: 20_000,
    });
    expect(first).not.toBe(second);
    expect(told(events).slice(2).sort()).toEqual(
      [
        `deleted replaced ${first} one`,
        `added replaced ${second} two`,
        `updated changed ${kept} two`,
      ].sort(),
    );
    // The delete of the old one comes before the add of the new one.
    const lines = told(events);
    expect(lines.indexOf(`deleted replaced ${first} one`)).toBeLessThan(
      lines.indexOf(`added replaced ${second} two`),
    );
    expect(informer.get(`${cluster.namespace}/replaced`)?.metadata.uid).toBe(second);
  });

  it('knows a write of its own at once when told its answer, and never takes an answer older than what it holds', async () => {
    const { relay, client } = await clientThroughRelay(cluster);
    stops.push(() => relay.close());
    const informer = new Informer(client, { path: configMaps(), initialBackoffMs: 100 });
    informer.start();
    stops.push(() => informer.stop());
    await informer.waitForSync();
    await makeConfigMap('written', 'one');
    const key = `${cluster.namespace}/written`;
    const seen = await eventually(() => informer.get(key), { what: 'the ConfigMap seen' });
    const basedOn = String(seen.metadata.resourceVersion);

    // No event can come while the relay refuses: our write is known from its answer alone.
    await relay.refuse();
    const answer = (await cluster.admin.replace(`${configMaps()}/written`, {
      ...seen,
      data: { value: 'two' },
    })) as KubeObject;
    informer.assume(answer, basedOn);
    expect(informer.get(key)?.data).toEqual({ value: 'two' });
    // An answer onto a version it no longer holds (a later event came first) is not taken.
    informer.assume({ ...seen, data: { value: 'stale' } }, basedOn);
    expect(informer.get(key)?.data).toEqual({ value: 'two' });
  });
});
