// Telling a Lease's holder that its device crashed (crash-recovery.ts): while the device is booted
// again, status.recovery and the DeviceRecovering condition True (DeviceCrashed); once it is back,
// recovery cleared and the condition False (DeviceRecovered); when the lease is lost, phase Lost
// with why. One merge patch of the status with what the core says now, so a write retried after a
// failure (the agent's lease work queue, with its backoff) writes the latest news, never a stale
// one, and none is dropped. The controller copies these to the LeaseRequest.
import { LeaseObject } from '../../api/index.js';
import { isNotFound, simlockPath, type KubeClient, type KubeObject } from '../../runtime/index.js';
import type { AgentCore } from '../core.js';

export interface DeviceHealthWriteContext {
  client: KubeClient;
  core: AgentCore;
  /** The Lease as the agent's informer has it now. */
  lease: (key: string) => KubeObject | undefined;
}

/**
 * Writes the lease's device health now. Throws when it is to be tried again (the Lease is not read
 * Granted yet, or the write failed): the agent's work queue runs it again after the lease's
 * backoff, one lease's work at a time, so each write reads what the core says when it runs and the
 * last one to land always says the latest (a fast boot's DeviceRecovered never lands before its
 * DeviceCrashed).
 */
export async function writeDeviceHealth(
  context: DeviceHealthWriteContext,
  key: string,
): Promise<void> {
  const health = context.core.recovery.healthOf(key);
  const object = context.lease(key);
  if (health === undefined || object === undefined) return;
  const lease = LeaseObject.safeParse(object);
  if (!lease.success) return;
  const phase = lease.data.status?.phase;
  if (phase !== 'Granted') {
    // Lost, Released, Expired: the lease is over, nothing to tell. Not Granted yet: the grant's
    // own write (a status PUT on the version it saw) is in flight, and a write before it would
    // make it conflict; this one follows it.
    if (phase === 'Pending' || phase === undefined)
      throw new Error('the Lease is not read Granted yet');
    return;
  }
  const status: Record<string, unknown> = {
    recovery: health.recovery,
    ...(health.condition ? { conditions: [health.condition] } : {}),
    ...(health.lost !== undefined ? { phase: 'Lost', message: health.lost } : {}),
  };
  try {
    await context.client.patch(
      simlockPath('lease', {
        namespace: lease.data.metadata.namespace ?? '',
        name: lease.data.metadata.name,
        subresource: 'status',
      }),
      { status },
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
