// The ceiling: kube-scheduler binding N small pods onto W Ready, untainted Nodes.
import { createNamespace, inParallel, stopChild } from '../harness/index.js';
import {
  endOfSide,
  sideResult,
  startOfSide,
  type SideContext,
  type SideResult,
} from './measure.js';
import {
  PodWatch,
  createNodes,
  deleteNodes,
  podObject,
  startScheduler,
  waitForProcess,
} from './nodes.js';

export async function bindsSide(context: SideContext): Promise<SideResult> {
  const { admin } = context.cluster;
  const { size, tag, options } = context;
  const namespace = `pods-${tag}`;
  await createNamespace(admin, namespace);
  const nodes = await createNodes(context);
  const scheduler = startScheduler(context, 'kube-scheduler');
  const pods = new PodWatch(admin, namespace);
  await pods.start();
  try {
    // Ready means it binds: one pod first, outside the count.
    await admin.create(`/api/v1/namespaces/${namespace}/pods`, podObject('warm-up'));
    await waitForProcess(scheduler, 'kube-scheduler', () => pods.bound.has('warm-up'), 'binding');
    pods.clear();
    const start = await startOfSide(admin);
    const names = Array.from({ length: size.requests }, (_, index) => `pod-${index}`);
    await inParallel(names, options.concurrency, async (name) => {
      await admin.create(`/api/v1/namespaces/${namespace}/pods`, podObject(name));
    });
    // Events are written asynchronously, after the binding: endOfSide gives them a moment.
    const end = await endOfSide(admin, start, {
      done: () => pods.bound.size >= size.requests,
      what: 'every pod bound',
      timeoutMs: options.sideTimeoutMs,
      keep: (key) => key.includes('pods') || key.includes('events'),
      creates: { 'POST pods': size.requests },
    });
    return sideResult(end, pods.bound.size, size.requests);
  } finally {
    await pods.stop();
    await stopChild(scheduler, 'SIGTERM');
    await deleteNodes(admin, nodes);
  }
}
