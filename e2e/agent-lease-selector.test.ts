// A real agent process watches its Leases by the field spec.worker (ADR 0018), not by the worker
// label: it answers a Lease of its worker that carries no worker label, and leaves alone a Lease
// of another worker labelled as its own. (The fallback to the label on an older Lease CRD is
// agent/cluster/lease-selector.cluster.test.ts: the shared Lease CRD is never changed here.)
import { afterEach, describe, expect, it } from 'vitest';
import { simlockPath } from '../runtime/index.js';
import { startFleetAgent, iosSimulatorScript, type AgentProcess } from '../test/cluster/agents.js';
import { TestFleet } from '../test/cluster/fleet.js';
import { eventually, useCluster } from '../test/cluster/harness.js';
import { aLease } from '../test/fixtures/objects.js';

const cluster = useCluster('agent-selector');
const agents: AgentProcess[] = [];

afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.kill('SIGKILL')));
});

async function createLease(
  fleet: TestFleet,
  name: string,
  worker: string,
  labels: Record<string, string>,
): Promise<void> {
  await fleet.admin.create(
    simlockPath('lease', { namespace: fleet.namespace }),
    aLease(name)
      .labels(labels)
      .worker(worker)
      .device({ platform: 'ios', model: 'iPhone 16' })
      .expiresIn()
      .obj(),
  );
}

describe('an agent', () => {
  it("answers the Leases whose spec.worker is its own, whatever their label, and no other worker's", async () => {
    const fleet = await TestFleet.create(cluster);
    const agent = await startFleetAgent(cluster, fleet, iosSimulatorScript());
    agents.push(agent);
    // Another worker's Lease wearing this agent's label: a label watch would deliver it.
    await createLease(fleet, 'other', fleet.name('b'), { 'simlock.dev/worker': fleet.name('a') });
    // This worker's Lease without the label: only a watch by spec.worker delivers it.
    await createLease(fleet, 'mine', fleet.name('a'), {});

    const mine = await eventually(async () => {
      const lease = await fleet.lease('mine');
      return lease?.status?.phase === 'Granted' ? lease : undefined;
    });
    expect(mine.metadata.finalizers).toContain('simlock.dev/reclaim');
    const other = await fleet.lease('other');
    expect(other?.status).toBe(undefined);
    expect(other?.metadata.finalizers ?? []).toEqual([]);
    expect(agent.output()).not.toContain('lacks a selectable field');
  });
});
