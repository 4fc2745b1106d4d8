// What stands around the measured writes (issue 36's open question: in the burst of 1000 × 5000 a
// status write costs kube-apiserver about twice what it costs alone). `bare`: nothing but the
// measured requests. `standing`: a store of standing requests, each with the Waiting status of W
// reasons the controller writes (a watch cache and a heap the size of the burst's). `watched`:
// watchers of every namespace's requests (as the controller's and the benchmark's watches), each
// sent every measured write. `loaded`: both. Set up before a run's workloads, taken down after.
import { z } from 'zod';
import type { KubeClient } from '../../runtime/index.js';
import { simlockPath } from '../../runtime/index.js';
import { createNamespace, inParallel, log, seconds, waitUntil } from '../harness/index.js';
import { productWaitingStatus } from './statuses.js';
import { createRequests, writeStatuses } from './workload.js';

export const SURROUNDINGS = ['bare', 'standing', 'watched', 'loaded'] as const;
export type Surroundings = (typeof SURROUNDINGS)[number];

export interface Loaded {
  /** Requests standing in their own namespace through the measurement. */
  standing: number;
  /** The reasons of each standing request's Waiting status. */
  workers: number;
  /** Watches of every namespace's requests, open through the measurement. */
  watchers: number;
}

const STANDING_NAMESPACE = 'status-write-standing';
const List = z.object({ items: z.array(z.unknown()) });

/** Sets up the surroundings; answers what takes them down again. */
export async function surround(
  admin: KubeClient,
  surroundings: Surroundings,
  loaded: Loaded,
): Promise<{ events: () => number; takeDown: () => Promise<void> }> {
  if (surroundings === 'bare') return { events: () => 0, takeDown: () => Promise.resolve() };
  const started = performance.now();
  const standing = surroundings === 'watched' ? 0 : loaded.standing;
  const watchers = surroundings === 'standing' ? 0 : loaded.watchers;
  await createNamespace(admin, STANDING_NAMESPACE);
  const names = Array.from({ length: standing }, (_, i) => `s-${String(i).padStart(5, '0')}`);
  // Made as the measured requests are (workload.ts), each given the controller's Waiting status.
  const versions = await createRequests(admin, STANDING_NAMESPACE, names);
  await writeStatuses(admin, STANDING_NAMESPACE, names, versions, () =>
    productWaitingStatus(loaded.workers),
  );
  let events = 0;
  const stop = new AbortController();
  const watches = Array.from({ length: watchers }, () =>
    admin
      .watch(
        simlockPath('leaseRequest', {}),
        { watch: true, allowWatchBookmarks: true, resourceVersion: '0' },
        () => {
          events += 1;
        },
        stop.signal,
      )
      .catch(() => undefined),
  );
  log(
    `${surroundings}: ${standing} standing requests (Waiting over ${loaded.workers} workers) and ` +
      `${watchers} watchers in ${seconds(performance.now() - started)}`,
  );
  // Each watch first gets the standing requests as ADDED: counted from here on.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const before = events;
  return {
    events: () => events - before,
    takeDown: async () => {
      stop.abort();
      await Promise.all(watches);
      const collection = simlockPath('leaseRequest', { namespace: STANDING_NAMESPACE });
      // One by one: a deletecollection's answer lists every object deleted, past the client's
      // bound on an answer's size at thousands of large statuses.
      await inParallel(names, 32, async (name) => {
        await admin.delete(simlockPath('leaseRequest', { namespace: STANDING_NAMESPACE, name }));
      });
      await waitUntil(
        async () =>
          List.parse(await admin.get(collection, { query: { limit: 1 } })).items.length === 0,
        120_000,
        'the standing requests deleted',
        250,
      );
    },
  };
}
