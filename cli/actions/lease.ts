// `kubectl simlock lease`: the client's lease (client/lease.ts) with the plugin's display: why it
// waits on stderr while it waits, then the grant line or the error; --hold stays and renews.
import { WorkerObject, type LeaseRequestObject } from '../../api/index.js';
import { simlockPath, type KubeClient } from '../../runtime/index.js';
import {
  HolderSession,
  LeaseCancelledError,
  getObject,
  requestLease,
  watchSecondsFor,
  workersForLabels,
  type Parsed,
} from '../../client/index.js';
import { INTERRUPTED_EXIT, TERMINATED_EXIT } from '../errors.js';
import { parseGlobals, rejectOutput } from '../flags.js';
import { resourceName, serialise, withKind } from '../format/output.js';
import { grantLine } from '../format/progress.js';
import { workerDisplay, type WorkerDisplay } from '../format/requests.js';
import type { CliIO, StopSignal } from '../io.js';
import { leaseOrder } from '../lease-flags.js';
import { connect } from '../options.js';
import { ProgressView } from '../progress-view.js';
import { ownPod, podOwner } from '../owner.js';
import { hold } from './hold.js';

export async function lease(argv: Record<string, unknown>, io: CliIO): Promise<number> {
  const globals = parseGlobals(argv);
  rejectOutput(globals, ['json', 'yaml', 'name', 'wide'], 'lease');
  const order = leaseOrder(argv);
  const session = connect(globals);
  const { client, namespace } = session;

  // Ctrl-C (or SIGTERM) from here on withdraws the request: listen before it exists, so that one
  // created while the signal arrives is withdrawn too.
  const stop = new AbortController();
  let stoppedBy: StopSignal | undefined;
  let onStopped: (signal: StopSignal) => void = () => undefined;
  const stopped = new Promise<StopSignal>((resolve) => (onStopped = resolve));
  const unsubscribe = io.onStop((signal) => {
    stoppedBy ??= signal;
    onStopped(signal);
    stop.abort();
  });
  let view: ProgressView | undefined;
  let holder: HolderSession | undefined;
  let held = false;
  try {
    const warn = (line: string) => io.err(`warning: ${line}`);
    const podName = order.ownerPod ?? ownPod(namespace);
    const owner =
      podName !== undefined
        ? await podOwner(client, namespace, podName, order.ownerPod !== undefined, warn)
        : undefined;
    if (order.hold) {
      holder = await HolderSession.start(
        client,
        namespace,
        order.spec.holderRenewSeconds ?? 10,
        warn,
      );
      order.spec.holderSession = holder.name;
    }
    const workers = await workersForLabels(client, warn);
    const worker = workerDisplay(workers);
    view = new ProgressView(io, worker);
    view.start();
    const progress = view;
    let granted: Parsed<LeaseRequestObject>;
    try {
      granted = await requestLease(client, namespace, order.spec, {
        name: order.name,
        owner,
        signal: stop.signal,
        workers,
        warn,
        onRequest: (request) => progress.update(request.object),
        watchSeconds: watchSecondsFor(session.requestTimeoutMs),
      });
    } catch (error) {
      if (!(error instanceof LeaseCancelledError)) throw error;
      view.finish();
      io.err(error.withdrawn.charAt(0).toUpperCase() + error.withdrawn.slice(1));
      return stoppedBy === 'SIGTERM' ? TERMINATED_EXIT : INTERRUPTED_EXIT;
    }
    view.finish();
    printGrant(granted, {
      io,
      format: globals.output,
      worker: await labelOf({ client, worker, workers }, granted.object.status?.worker),
    });
    if (!holder) return 0;
    held = true;
    return await hold(client, io, holder, granted.object.metadata.name, stopped);
  } finally {
    view?.finish();
    unsubscribe();
    if (holder && !held) await holder.stop();
  }
}

function printGrant(
  request: Parsed<LeaseRequestObject>,
  context: { io: CliIO; worker: WorkerDisplay; format: string | undefined },
): void {
  const { io } = context;
  const serialised = serialise(
    withKind('leaseRequest', request.raw),
    context.format === 'json' || context.format === 'yaml' ? context.format : undefined,
  );
  if (serialised !== undefined) io.out(serialised);
  else if (context.format === 'name')
    io.out(resourceName('leaseRequest', request.object.metadata.name));
  else io.out(grantLine(request.object, context.worker));
}

/** Names the granted worker by its label; a worker added since Workers were read is read now. */
async function labelOf(
  context: { client: KubeClient; worker: WorkerDisplay; workers: readonly WorkerObject[] },
  name: string | undefined,
): Promise<WorkerDisplay> {
  if (name === undefined || context.workers.some((w) => w.metadata.name === name)) {
    return context.worker;
  }
  try {
    const read = await getObject(
      context.client,
      simlockPath('worker', { name }),
      WorkerObject,
      'worker',
    );
    return workerDisplay([read.object]);
  } catch {
    return context.worker;
  }
}
