// Puts a Lease CRD in force on a running API server and waits until the API server serves it: a
// list with a field selector on spec.worker is answered (selectable) or refused with 400 (not),
// and a watch of Leases opens again (the new handler's watch cache is built).
import { KubeApiError, simlockPath, type KubeClient } from '../../runtime/index.js';
import { replaceCrd, waitUntil, waitUntilWatchable, type Crd } from '../harness/index.js';
import { selectsWorkerField } from './variants.js';

export async function applyLeaseCrd(
  admin: KubeClient,
  crd: Crd,
  namespace: string,
): Promise<{ switchMs: number }> {
  const started = performance.now();
  await replaceCrd(admin, crd);
  const selectable = selectsWorkerField(crd);
  await waitUntil(
    async () => (await fieldSelectorAnswered(admin, namespace)) === selectable,
    90_000,
    `the Lease CRD in force (spec.worker ${selectable ? '' : 'not '}selectable)`,
    250,
  );
  await waitUntilWatchable(
    admin,
    simlockPath('lease', { namespace }),
    'leases after the CRD update',
  );
  return { switchMs: performance.now() - started };
}

/** true: a spec.worker field selector is served; false: refused as unknown (400). */
async function fieldSelectorAnswered(
  admin: KubeClient,
  namespace: string,
): Promise<boolean | undefined> {
  try {
    await admin.get(simlockPath('lease', { namespace }), {
      query: { fieldSelector: 'spec.worker=probe', limit: 1 },
    });
    return true;
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 400) return false;
    // The handler being rebuilt (5xx, 429): neither, for now.
    if (error instanceof KubeApiError) return undefined;
    throw error;
  }
}
