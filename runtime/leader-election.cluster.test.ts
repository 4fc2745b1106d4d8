// Leader election against the real API server, with the leader's connection going silent (as when
// etcd restarts and the API server holds every write, or a network dies): its renewal hangs. It
// must stop leading by its renewal deadline, counted from the last renewal it sent, before a
// replica that still reaches the API server can take the Lease over: never two leaders at once.
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { clientThroughRelay } from '../test/cluster/relay.js';
import { systemClock } from './clock.js';
import type { KubeClient } from './kube-client.js';
import { LeaderElector, type RenewalObserver } from './leader-election.js';
import { silentLogger } from './log.js';
import { coordinationLeasePath } from './paths.js';

const cluster = useCluster('election');
const stops: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

function elector(
  client: KubeClient,
  identity: string,
  times: { started?: number; stopped?: number },
  renewals?: RenewalObserver,
) {
  const elector = new LeaderElector({
    client,
    namespace: cluster.namespace,
    name: 'election',
    identity,
    clock: systemClock(),
    log: silentLogger,
    leaseDurationSeconds: 3,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
    onStartedLeading: () => (times.started = Date.now()),
    onStoppedLeading: () => (times.stopped = Date.now()),
    renewals,
  });
  stops.push(() => elector.stop());
  return elector;
}

describe('leader election', () => {
  it('a leader whose renewal hangs stops leading before another replica takes over', async () => {
    const { relay, client: throughRelay } = await clientThroughRelay(cluster);
    stops.push(() => relay.close());
    const first: { started?: number; stopped?: number } = {};
    const second: { started?: number; stopped?: number } = {};
    // What the first replica's renewals tell (the controller judges heartbeat lapses by it).
    const told: string[] = [];
    const renewalsTold: RenewalObserver = {
      sent: () => told.push('sent'),
      answered: () => told.push('answered'),
      failed: () => told.push('failed'),
    };
    elector(throughRelay, 'first', first, renewalsTold).start();
    await eventually(() => first.started, { what: 'the first replica leading' });
    elector(cluster.admin, 'second', second).start();
    // Two renewals go through (seen on the Lease), then the first replica's connection goes silent.
    const renewals = new Set<string>();
    await eventually(
      async () => {
        const lease = (await cluster.admin.get(
          coordinationLeasePath(cluster.namespace, 'election'),
        )) as { spec?: { renewTime?: string } };
        renewals.add(lease.spec?.renewTime ?? '');
        return renewals.size > 2 ? true : undefined;
      },
      { what: 'two renewals of the first replica' },
    );
    relay.silence();
    const silentAt = Date.now();
    // Its next renewal is sent into the silence: it hangs there.
    await eventually(() => (relay.droppedFromClient > 0 ? true : undefined), {
      what: 'a renewal stuck on the silent connection',
    });

    const takenOver = await eventually(() => second.started, {
      what: 'the second replica leading',
      timeoutMs: 15_000,
    });
    expect(second.started).toBeDefined();
    // The first replica stopped, and before the second started.
    expect(first.stopped).toBeDefined();
    expect(first.stopped ?? Infinity).toBeLessThan(takenOver);
    // Within its renewal deadline of the silence (plus a renewal period and a little slack).
    expect((first.stopped ?? Infinity) - silentAt).toBeLessThan(2000 + 500 + 500);
    // Its renewals were answered until the silence; the one sent into it is told failed (its
    // deadline's timeout), never answered.
    await eventually(() => (told.includes('failed') ? true : undefined), {
      what: 'the renewal sent into the silence told failed',
    });
    const last = told.lastIndexOf('answered');
    expect(told.slice(0, last + 1)).toEqual(
      told.slice(0, last + 1).map((_, i) => (i % 2 ? 'answered' : 'sent')),
    );
    expect(told.slice(last + 1, last + 3)).toEqual(['sent', 'failed']);
  });
});
