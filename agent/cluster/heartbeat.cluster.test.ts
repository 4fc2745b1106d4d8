// The agent's heartbeat after a network partition, against the real API server through a relay
// that goes silent and heals: the connection open during the silence stays dead, as a TCP
// connection does while its retransmissions back off. A renewal stuck on it must give up well
// within the lease, so that the next one, on a new connection, keeps the Worker from lapsing.
import { afterEach, describe, expect, it } from 'vitest';
import { heartbeatLeaseName } from '../../api/index.js';
import { coordinationLeasePath, silentLogger, systemClock } from '../../runtime/index.js';
import { eventually, useCluster } from '../../test/cluster/harness.js';
import { clientThroughRelay } from '../../test/cluster/relay.js';
import { Heartbeat } from './heartbeat.js';

const cluster = useCluster('heartbeat');
const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** The renewTime the API server holds for the worker's heartbeat, in ms (0 if none). */
async function renewedAt(worker: string): Promise<number> {
  const lease = (await cluster.admin
    .get(coordinationLeasePath(cluster.namespace, heartbeatLeaseName(worker)))
    .catch(() => undefined)) as { spec?: { renewTime?: string } } | undefined;
  return Date.parse(lease?.spec?.renewTime ?? '') || 0;
}

describe('heartbeat', () => {
  it('renews again soon after a partition heals, on a new connection', async () => {
    const { relay, client } = await clientThroughRelay(cluster);
    stops.push(() => relay.close());
    // A 6 s lease renewed every 500 ms: a renewal gives up after 3 s.
    const heartbeat = new Heartbeat({
      client,
      clock: systemClock(),
      log: silentLogger,
      namespace: cluster.namespace,
      worker: 'partitioned',
      durationSeconds: 6,
      renewEveryMs: 500,
    });
    heartbeat.start();
    stops.push(() => heartbeat.stop());
    await eventually(async () => ((await renewedAt('partitioned')) > 0 ? true : undefined), {
      what: 'a first renewal',
    });

    const before = await renewedAt('partitioned');
    relay.silence();
    // Until a renewal is stuck on the connection that is now dead (its bytes dropped by the relay).
    const dropped = relay.droppedFromClient;
    await eventually(() => (relay.droppedFromClient > dropped ? true : undefined), {
      intervalMs: 50,
      what: 'a renewal sent into the silence',
    });
    const healedAt = Date.now();
    relay.heal();

    // Renewed again before the 6 s lease could lapse: the stuck renewal gave up at most 3 s after
    // it began, and the next went through on a new connection. (Given up only after 30 s, the
    // client's default, the Worker would have lapsed for half a minute.)
    const renewed = await eventually(
      async () => {
        const at = await renewedAt('partitioned');
        return at > healedAt ? at : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'a renewal after the partition healed' },
    );
    expect(renewed - before).toBeLessThan(6000);
  });
});
