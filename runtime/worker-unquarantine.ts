// An operator's unquarantine: adds (or moves to now) the entry {device, at} in the Worker's
// spec.unquarantine, which its agent reads and acts on (agent/cluster/unquarantine-watch.ts).
// Shared by `kubectl simlock device unquarantine` and the console. The list is a map keyed by
// device, and a JSON merge patch replaces a list whole: so it is a read-modify-write made on the
// version read (a conflict reads again), keeping every other entry whose device is still
// quarantined (one whose quarantine ended has done its work and is dropped).
import { z } from 'zod';
import { Device, SimlockError, WorkerSpec } from '../api/index.js';
import { isConflict, isNotFound, type KubeClient } from './kube-client.js';
import { simlockPath } from './paths.js';

const WorkerForUnquarantine = z.object({
  metadata: z.object({ name: z.string(), resourceVersion: z.string() }),
  spec: z.object({ unquarantine: WorkerSpec.shape.unquarantine }).optional(),
  status: z.object({ devices: z.array(Device).optional() }).optional(),
});

export interface UnquarantineRequested {
  worker: string;
  device: string;
  /** When it was asked: the agent ends the device's quarantine if it began before. */
  at: string;
  /** The quarantine it ends, as the Worker's status showed it. */
  quarantine: NonNullable<Device['quarantine']>;
}

/** Asks the agent of `worker` to put `device` back in service; NOT_FOUND if it is not quarantined. */
export async function requestUnquarantine(
  client: KubeClient,
  worker: string,
  device: string,
  now: Date,
  attempts = 5,
): Promise<UnquarantineRequested> {
  const path = simlockPath('worker', { name: worker });
  for (let attempt = 1; ; attempt++) {
    let read: z.infer<typeof WorkerForUnquarantine>;
    try {
      read = WorkerForUnquarantine.parse(await client.get(path));
    } catch (error) {
      if (isNotFound(error)) {
        throw new SimlockError('NOT_FOUND', `worker "${worker}" not found`, { worker });
      }
      throw error;
    }
    const devices = read.status?.devices ?? [];
    const listed = devices.find((entry) => entry.id === device);
    if (listed?.quarantine === undefined) {
      throw new SimlockError(
        'NOT_FOUND',
        `device "${device}" is not quarantined on worker "${worker}"` +
          (listed === undefined ? '' : ` (it is ${listed.state})`),
        { worker, device },
      );
    }
    const quarantined = new Set(
      devices.filter((entry) => entry.quarantine !== undefined).map((entry) => entry.id),
    );
    // Never before the quarantine seen began: the agent's clock may run ahead of this one.
    const at = new Date(
      Math.max(now.getTime(), Date.parse(listed.quarantine.since) + 1),
    ).toISOString();
    const entries = [
      ...(read.spec?.unquarantine ?? []).filter(
        (entry) => entry.device !== device && quarantined.has(entry.device),
      ),
      { device, at },
    ].slice(-512);
    try {
      await client.patch(path, {
        metadata: { resourceVersion: read.metadata.resourceVersion },
        spec: { unquarantine: entries },
      });
      return { worker, device, at, quarantine: listed.quarantine };
    } catch (error) {
      if (isConflict(error) && attempt < attempts) continue;
      if (isNotFound(error)) {
        throw new SimlockError('NOT_FOUND', `worker "${worker}" not found`, { worker });
      }
      throw error;
    }
  }
}
