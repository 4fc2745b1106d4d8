// `lease --hold` after the grant: stay in the foreground while the holder session is renewed,
// warn when the lease is about to expire, say when its device crashed and is booted again under
// the lease and when it is back, and release it on exit, Ctrl-C or SIGTERM.
import { EXPIRING_SOON_CONDITION, LeaseRequestObject, SimlockError } from '../../api/index.js';
import { isNotFound, simlockPath, type KubeClient } from '../../runtime/index.js';
import { INTERRUPTED_EXIT, TERMINATED_EXIT } from '../errors.js';
import {
  RecoveryTracker,
  getObject,
  releaseLease,
  type HolderSession,
} from '../../client/index.js';
import type { CliIO, StopSignal } from '../io.js';

const POLL_MS = 1000;

export async function hold(
  client: KubeClient,
  io: CliIO,
  session: HolderSession,
  name: string,
  stopped: Promise<StopSignal>,
): Promise<number> {
  const path = simlockPath('leaseRequest', { namespace: session.namespace, name });
  io.err(
    `Holding lease ${name} (renewed every ${session.renewSeconds}s); Ctrl-C or SIGTERM releases it`,
  );
  let warned = false;
  const recovery = new RecoveryTracker();
  let signal: StopSignal | undefined;
  void stopped.then((value) => (signal = value));
  try {
    for (;;) {
      await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, POLL_MS))]);
      if (signal) break;
      let request;
      try {
        request = (await getObject(client, path, LeaseRequestObject, 'leaserequest')).object;
      } catch (error) {
        if (isNotFound(error))
          throw new SimlockError('LEASE_LOST', `lease ${name} was deleted while held`);
        continue;
      }
      const status = request.status;
      if (status?.phase !== 'Granted') {
        const why = status?.conditions?.find((c) => c.type === 'Granted')?.message ?? status?.phase;
        throw new SimlockError('LEASE_LOST', `lease ${name} ended while held: ${why ?? 'unknown'}`);
      }
      // "lease X: device iPhone 17 (…) crashed (shut down): booting it again, back in about 40 s"
      const notice = recovery.see(request);
      if (notice) io.err(`lease ${name}: ${notice.text}`);
      const soon = status.conditions?.find((c) => c.type === EXPIRING_SOON_CONDITION);
      if (soon?.status === 'True' && !warned) {
        warned = true;
        io.err(
          `warning: lease ${name}: ${soon.message}; kubectl simlock extend ${name} --by 30m keeps it`,
        );
      } else if (soon?.status !== 'True') warned = false;
    }
  } finally {
    await session.stop();
    await releaseLease(client, session.namespace, name, { wait: false }).catch(() => undefined);
  }
  io.err(`Lease ${name} released`);
  return signal === 'SIGTERM' ? TERMINATED_EXIT : INTERRUPTED_EXIT;
}
