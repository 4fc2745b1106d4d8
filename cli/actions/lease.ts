// `kubectl simlock lease`: create a LeaseRequest, show why it waits, print the grant or the error.
import {
  API_VERSION,
  LeaseRequestObject,
  REQUEST_FINALIZER,
  RESOURCES,
  SimlockError,
  WorkerObject,
  type ErrorCode,
} from '../../api/index.js';
import {
  KubeUnavailableError,
  isNotFound,
  simlockPath,
  type KubeClient,
} from '../../runtime/index.js';
import { formatDuration } from '../duration.js';
import { INTERRUPTED_EXIT, TERMINATED_EXIT } from '../errors.js';
import { parseGlobals, rejectOutput } from '../flags.js';
import { resourceName, serialise, withKind } from '../format/output.js';
import { grantLine } from '../format/progress.js';
import { workerDisplay, type WorkerDisplay } from '../format/requests.js';
import type { CliIO, StopSignal } from '../io.js';
import { getObject, parseAnswer, workersForLabels, type Parsed } from '../kube.js';
import { leaseOrder } from '../lease-flags.js';
import { connect } from '../options.js';
import { ProgressView } from '../progress-view.js';
import { HolderSession } from '../holder-session.js';
import { ownPod, podOwner } from '../owner.js';
import { waitForEnd } from '../wait.js';
import { hold } from './hold.js';

/**
 * The controller fails a request that waited past its timeout itself (TIMEOUT); the plugin gives up
 * this much later, for a controller that is not running at all.
 */
const CONTROLLER_GRACE_MS = 60_000;

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
    const created = parseAnswer(
      LeaseRequestObject,
      await client.create(simlockPath('leaseRequest', { namespace }), {
        apiVersion: API_VERSION,
        kind: RESOURCES.leaseRequest.kind,
        metadata: {
          ...(order.name !== undefined ? { name: order.name } : { generateName: 'lease-' }),
          // The controller's release finalizer from the start saves it a write (ADR 0005).
          finalizers: [REQUEST_FINALIZER],
          ...(owner ? { ownerReferences: [owner] } : {}),
        },
        spec: order.spec,
      }),
      'leaserequest',
    );
    const name = created.object.metadata.name;
    if (stoppedBy) return await withdraw(client, namespace, name, stoppedBy, io);

    const workers = await workersForLabels(client, (line) => io.err(`warning: ${line}`));
    const worker = workerDisplay(workers);
    view = new ProgressView(io, worker);
    view.start();
    const spec = order.spec;
    const waitMs =
      (spec.noWait === true ? 0 : spec.waitTimeoutSeconds * 1000) + CONTROLLER_GRACE_MS;
    const outcome = await waitForEnd(client, namespace, name, {
      signal: stop.signal,
      deadline: io.now() + waitMs,
      now: () => io.now(),
      onChange: (request) => view?.update(request.object),
      watchSeconds: watchSecondsFor(session.requestTimeoutMs),
    }).catch(async (error: unknown) => {
      // A wait that cannot go on must not leave a request behind that nobody waits for.
      await tryWithdraw(client, namespace, name);
      throw error;
    });
    view.finish();

    switch (outcome.kind) {
      case 'stopped':
        return await withdraw(client, namespace, name, stoppedBy ?? 'SIGINT', io);
      case 'deleted':
        throw new SimlockError('WITHDRAWN', `request ${name} was deleted before it was granted`);
      case 'deadline': {
        const withdrawn = await tryWithdraw(client, namespace, name);
        if (outcome.lastError instanceof KubeUnavailableError) {
          throw new SimlockError(
            'UNAVAILABLE',
            `lost the cluster while waiting (${outcome.lastError.message}); ${withdrawn}`,
          );
        }
        throw new SimlockError(
          'TIMEOUT',
          `no answer within ${formatDuration(Math.round(waitMs / 1000))} (is the controller running?); ${withdrawn}`,
        );
      }
      default: {
        const code = await ended(outcome.request, {
          client,
          io,
          worker,
          workers,
          format: globals.output,
        });
        if (!holder) return code;
        held = true;
        return await hold(client, io, holder, name, stopped);
      }
    }
  } finally {
    view?.finish();
    unsubscribe();
    if (holder && !held) await holder.stop();
  }
}

async function ended(
  request: Parsed<LeaseRequestObject>,
  context: {
    client: KubeClient;
    io: CliIO;
    worker: WorkerDisplay;
    workers: readonly WorkerObject[];
    format: string | undefined;
  },
): Promise<number> {
  const { status, metadata } = request.object;
  if (status?.phase === 'Failed') {
    const error = status.error ?? {
      code: 'INTERNAL' as ErrorCode,
      message: 'failed without a reason',
    };
    throw new SimlockError(error.code, error.message, error.details);
  }
  if (status?.phase !== 'Granted') {
    throw new SimlockError(
      'LEASE_LOST',
      `the lease of request ${metadata.name} ended (${status?.phase ?? 'unknown'}) before it was reported`,
    );
  }
  const { io } = context;
  const serialised = serialise(
    withKind('leaseRequest', request.raw),
    context.format === 'json' || context.format === 'yaml' ? context.format : undefined,
  );
  if (serialised !== undefined) io.out(serialised);
  else if (context.format === 'name') io.out(resourceName('leaseRequest', metadata.name));
  else io.out(grantLine(request.object, await labelOf(context, status.worker)));
  return 0;
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

/** Deletes the request (the controller releases anything it got); says how that went. */
async function tryWithdraw(client: KubeClient, namespace: string, name: string): Promise<string> {
  try {
    await client.delete(simlockPath('leaseRequest', { namespace, name }));
  } catch (error) {
    if (!isNotFound(error)) {
      const reason = error instanceof Error ? error.message : String(error);
      return `request ${name} could not be withdrawn (${reason}): delete it with kubectl simlock release ${name}`;
    }
  }
  return `request ${name} withdrawn`;
}

/** Ctrl-C: withdraw the request and say so; exit as a process stopped by that signal does. */
async function withdraw(
  client: KubeClient,
  namespace: string,
  name: string,
  signal: StopSignal,
  io: CliIO,
): Promise<number> {
  const withdrawn = await tryWithdraw(client, namespace, name);
  io.err(withdrawn.charAt(0).toUpperCase() + withdrawn.slice(1));
  return signal === 'SIGTERM' ? TERMINATED_EXIT : INTERRUPTED_EXIT;
}

/** Watches are reopened before --request-timeout would cut them (0: no timeout). */
export function watchSecondsFor(requestTimeoutMs: number): number {
  if (requestTimeoutMs <= 0) return 60;
  return Math.max(1, Math.min(60, Math.floor(requestTimeoutMs / 1000) - 2));
}
