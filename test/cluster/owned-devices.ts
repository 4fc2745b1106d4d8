// What the owned-devices stories (e2e/owned-devices*.test.ts) do alike around a real agent: start
// the controller on its fleet, wait until the agent offers the model they lease, and lease one
// device at a time as a client does (requested, granted, released, gone).
import type { AgentProcess } from './agents.js';
import { controllerFor } from './controller.js';
import type { TestFleet } from './fleet.js';
import { eventually, type ClusterTestContext } from './harness.js';
import { simlockPath } from '../../runtime/index.js';

type Cleanups = (() => Promise<unknown>)[];

/** Starts the controller on `fleet`; its stop goes onto `cleanups`. */
export async function startController(
  cluster: ClusterTestContext,
  fleet: TestFleet,
  cleanups: Cleanups,
): Promise<void> {
  const reconciler = controllerFor(cluster, fleet);
  cleanups.push(() => reconciler.stop());
  await reconciler.start();
}

/** The agent's Worker status once its catalog offers `model`. */
export function statusOffering(agent: AgentProcess, model: string) {
  return eventually(async () => {
    const current = await agent.status();
    return current?.catalog?.models.some((offered) => offered.name === model) ? current : undefined;
  });
}

/** Deletes request `name` (a client's release) and waits until it is gone. */
export async function releaseRequest(fleet: TestFleet, name: string): Promise<void> {
  await fleet.admin.delete(simlockPath('leaseRequest', { namespace: fleet.namespace, name }));
  await fleet.requestGone(name);
}

/** One lease's whole life as a client lives it: requested, granted (within a minute), released. */
export async function leaseOnce(
  fleet: TestFleet,
  name: string,
  spec: Record<string, unknown>,
): Promise<void> {
  await fleet.createRequest(name, spec);
  await fleet.phase(name, 'Granted', 60_000);
  await releaseRequest(fleet, name);
}
