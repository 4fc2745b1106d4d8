// Where the chart says the exec proxy is: the ConfigMap `simlock` in its namespace, as the typed
// client and the console both read it (chartProxyUrl), against the real API server.
import { describe, expect, it } from 'vitest';
import { useCluster } from '../test/cluster/harness.js';
import { chartProxyUrl } from './exec-client.js';

const cluster = useCluster('proxy-url');
const configMaps = () => `/api/v1/namespaces/${cluster.namespace}/configmaps`;

/** Publishes `data` in the ConfigMap `simlock` of the file's namespace, made or replaced. */
async function publish(data: Record<string, string>): Promise<void> {
  await cluster.admin.delete(`${configMaps()}/simlock`).catch(() => undefined);
  await cluster.admin.create(configMaps(), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'simlock' },
    data,
  });
}

describe('chartProxyUrl', () => {
  it('is undefined where the chart is not installed (no ConfigMap)', async () => {
    expect(await chartProxyUrl(cluster.admin, cluster.namespace)).toBeUndefined();
  });

  it('answers the http(s) URL the ConfigMap names', async () => {
    const url = `https://simlock-proxy.${cluster.namespace}.svc:8443`;
    await publish({ proxyUrl: url });
    expect(await chartProxyUrl(cluster.admin, cluster.namespace)).toBe(url);
  });

  it('is undefined for a ConfigMap without a proxy URL, with one not http(s), or one too long', async () => {
    const answers: (string | undefined)[] = [];
    const published: Record<string, string>[] = [
      { other: 'x' },
      { proxyUrl: `simlock-proxy.${cluster.namespace}.svc:8443` },
      { proxyUrl: `https://${'a'.repeat(2048)}.example` },
    ];
    for (const data of published) {
      await publish(data);
      answers.push(await chartProxyUrl(cluster.admin, cluster.namespace));
    }
    expect(answers).toEqual([undefined, undefined, undefined]);
  });
});
