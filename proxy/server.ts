// The exec proxy: POST /v1/namespaces/{ns}/leases/{name}/exec with a bearer token, {ns}/{name}
// the lease as its holder knows it: its request's. It checks who calls and whether they may
// (TokenReview, SubjectAccessReview on the request's namespace and name), finds the request's Lease
// where the request's status says it is (the worker's namespace, ADR 0034), its worker and its
// agent's endpoint, and forwards the call with its own credentials, streaming the agent's
// Server-Sent Events back as they come. A client that goes away ends the remote process; a lease
// that ends under it ends the stream LEASE_LOST, with the reason (lease-end.ts).
import express, { type Request, type Response } from 'express';
import {
  ExecRequest,
  LeaseObject,
  LeaseRequestObject,
  MAX_EXEC_BODY_BYTES,
  WorkerObject,
} from '../api/index.js';
import {
  KubeApiError,
  KubeUnavailableError,
  isNotFound,
  isTransient,
  leaseOfRequest,
  metricsHandler,
  sendError,
  simlockPath,
  startEventStream,
  TokenReviewCache,
  writeWithBackpressure,
  type KubeClient,
  type Logger,
} from '../runtime/index.js';
import type { ActivityRecorder } from './activity.js';
import { agentReachable, reachAgent } from './agent-dial.js';
import type { AgentTunnels } from './tunnel-server.js';
import { ProxyMetrics, type ExecOutcome } from './metrics.js';
import { forwardExec, forwardTarget } from './tunnel-forward.js';
import { bearerToken, mayExec, reviewToken, type Caller } from './auth.js';
import { isLeaseLostFrame, leaseLostFrame, SseFrames } from './lease-end.js';
import { AgentEndpointRefused, type AgentTlsOptions } from './agent-tls.js';

export interface ProxyOptions {
  client: KubeClient;
  log: Logger;
  /** The token the proxy presents to agents (its service account's). */
  agentToken: () => string;
  metrics?: ProxyMetrics;
  /** Records exec activity on leases for idle reclaim; none: not recorded. */
  activity?: ActivityRecorder | undefined;
  /**
   * How long an accepted token is remembered (runtime/token-review-cache.ts); 0: every exec asks
   * the API server. A client that execs again and again with one token then costs one TokenReview
   * per this time, not one per exec; a revoked token is accepted at most this long after.
   */
  tokenReviewCacheMs?: number | undefined;
  /** How agents are dialled (agent-tls.ts); none: https:// against the system's roots only. */
  agentTls?: AgentTlsOptions | undefined;
  /** Agents connected through a tunnel (ADR 0024): used before a Worker's endpoint. */
  tunnels?: AgentTunnels | undefined;
  /**
   * This replica's URL as the other replicas reach it (`--advertise-url`): said to the agents whose
   * tunnels it holds; a call for a worker whose tunnel another replica holds is forwarded there.
   */
  advertiseUrl?: string | undefined;
}

/** The default of `tokenReviewCacheMs`: as long as the agent remembers the proxy's token. */
export const TOKEN_REVIEW_CACHE_MS = 10_000;

export function createProxyApp(options: ProxyOptions): express.Express {
  const { log } = options;
  const metrics = options.metrics ?? new ProxyMetrics();
  const cacheMs = options.tokenReviewCacheMs ?? TOKEN_REVIEW_CACHE_MS;
  const tokens = new TokenReviewCache<Caller>({ ttlMs: cacheMs });
  const review = (token: string) => {
    metrics.tokenReviews.inc();
    return reviewToken(options.client, token);
  };
  const callerOf: CallerOf = (token) =>
    cacheMs > 0 ? tokens.review(token, review) : review(token);
  const app = express();
  app.disable('x-powered-by');

  app.get('/healthz', (_req, res) => {
    res.type('text').send('ok');
  });
  app.get('/metrics', metricsHandler(metrics.registry));

  app.post(
    '/v1/namespaces/:namespace/leases/:name/exec',
    express.json({ limit: MAX_EXEC_BODY_BYTES, type: () => true }),
    (req: Request<{ namespace: string; name: string }>, res: Response) => {
      const started = performance.now();
      const outcome = (label: ExecOutcome) => {
        metrics.requests.inc({ outcome: label });
        metrics.seconds.observe((performance.now() - started) / 1000);
      };
      handleExec(options, callerOf, req, res, outcome).catch((error: unknown) => {
        log.error('exec failed', { error });
        outcome('error');
        // The API server unreachable, or answering that it cannot now (a 5xx or 429, as while it
        // shuts down): UNAVAILABLE, which a client tries again; not the proxy's own failure.
        if (error instanceof KubeUnavailableError)
          sendError(res, 'UNAVAILABLE', 'the API server could not be reached');
        else if (error instanceof KubeApiError && isTransient(error))
          sendError(
            res,
            'UNAVAILABLE',
            `the API server could not answer now (${error.status}: ${error.message})`,
          );
        else sendError(res, 'INTERNAL', 'the proxy failed; see its logs');
        if (res.headersSent && !res.writableEnded) res.end();
      });
    },
  );

  // A body that is not JSON, or too large: the caller's mistake, said as such.
  app.use((error: unknown, _req: Request, res: Response, next: (error?: unknown) => void) => {
    const status = (error as { status?: number }).status;
    if (status === 413) {
      return sendError(
        res,
        'INVALID_REQUEST',
        `the body is larger than ${MAX_EXEC_BODY_BYTES} bytes`,
        undefined,
        413,
      );
    }
    if (status === 400) return sendError(res, 'INVALID_REQUEST', 'the body is not valid JSON');
    next(error);
  });
  return app;
}

/** Who is behind a bearer token (undefined: not accepted). */
type CallerOf = (token: string) => Promise<Caller | undefined>;

async function handleExec(
  options: ProxyOptions,
  callerOf: CallerOf,
  req: Request<{ namespace: string; name: string }>,
  res: Response,
  outcome: (label: ExecOutcome) => void,
): Promise<void> {
  const { client, log } = options;
  const { namespace, name } = req.params;
  const token = bearerToken(req.headers.authorization);
  if (!token) {
    outcome('unauthenticated');
    return sendError(res, 'UNAUTHENTICATED', 'a bearer token is required');
  }
  const caller = await callerOf(token);
  if (!caller) {
    outcome('unauthenticated');
    return sendError(res, 'UNAUTHENTICATED', 'the token was not accepted');
  }
  if (!(await mayExec(client, caller, namespace, name))) {
    outcome('forbidden');
    return sendError(
      res,
      'FORBIDDEN',
      `${caller.username} may not create leases/exec on ${namespace}/${name}`,
    );
  }
  const body = ExecRequest.safeParse(req.body);
  if (!body.success) {
    outcome('invalid');
    const issue = body.error.issues[0];
    return sendError(
      res,
      'INVALID_REQUEST',
      `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
    );
  }

  const found = await grantedLease(client, namespace, name);
  if ('refusal' in found) {
    outcome(found.refusal.outcome);
    return sendError(res, found.refusal.code, found.refusal.message);
  }
  const { lease } = found;
  // The agent knows the Lease by its own coordinates; the caller, by its request's.
  const leaseNamespace = lease.metadata.namespace ?? namespace;
  const leaseName = lease.metadata.name;
  const asCallerSays = callerWording(`${leaseNamespace}/${leaseName}`, `${namespace}/${name}`);
  const workerName = lease.spec.worker;
  let endpoint: string | undefined;
  let tunnelled: { connected: boolean; proxy?: string | undefined } | undefined;
  try {
    const worker = WorkerObject.safeParse(
      await client.get(simlockPath('worker', { name: workerName })),
    );
    endpoint = worker.success ? worker.data.status?.endpoint : undefined;
    tunnelled = worker.success ? worker.data.status?.tunnel : undefined;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const tunnel = options.tunnels?.get(workerName);
  const holder = tunnel ? undefined : forwardTarget(options.advertiseUrl, tunnelled, req);
  if (holder) return outcome(await forwardExec(holder, req, res, log));
  if (!agentReachable(tunnel, endpoint)) {
    outcome('unavailable');
    return sendError(
      res,
      'UNAVAILABLE',
      `worker ${workerName} has no exec endpoint and no tunnel to this proxy`,
    );
  }

  // Forward with the proxy's own credentials. Aborted when the client goes away.
  const upstream = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) upstream.abort();
  });
  let answer: globalThis.Response;
  try {
    answer = await reachAgent(
      workerName,
      tunnel,
      endpoint,
      {
        headers: {
          authorization: `Bearer ${options.agentToken()}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
        },
        body: JSON.stringify({ ...body.data, namespace: leaseNamespace, lease: leaseName }),
        signal: upstream.signal,
      },
      options.agentTls ?? {},
    );
  } catch (error) {
    if (error instanceof AgentEndpointRefused) {
      outcome('endpoint-refused');
      log.warn('agent endpoint refused', { worker: workerName, endpoint });
      return sendError(res, 'UNAVAILABLE', error.message);
    }
    outcome(upstream.signal.aborted ? 'client-gone' : 'unavailable');
    log.warn('agent unreachable', { worker: workerName, endpoint, error });
    return sendError(res, 'UNAVAILABLE', `the agent of ${workerName} could not be reached`);
  }
  if (!answer.ok || !answer.body) {
    // The agent refused before anything ran (a tool that does not fit the lease, …): relay it.
    const text = (await answer.text().catch(() => '')).slice(0, 16_384);
    outcome(`agent-${answer.status}`);
    res.status(answer.status).type('application/json').send(asCallerSays(text));
    return;
  }
  log.info('exec', {
    caller: caller.username,
    namespace,
    lease: name,
    leaseObject: `${leaseNamespace}/${leaseName}`,
    worker: workerName,
    tool: body.data.tool,
  });
  startEventStream(res);
  // Activity from its start and all the while it runs (idle reclaim never takes a busy lease).
  // Written on the Lease itself, where the controller reads it.
  const ended = options.activity?.started(leaseNamespace, leaseName);
  // Copy frame by frame; when the client reads slowly, stop reading the agent (backpressure). A
  // LEASE_LOST from the agent (the lease ended, its tool was stopped) is said with the reason.
  const frames = new SseFrames();
  let leaseLost = false;
  try {
    for await (const chunk of answer.body) {
      if (res.destroyed) break;
      for (const frame of frames.push(chunk as Uint8Array)) {
        if (isLeaseLostFrame(frame)) {
          leaseLost = true;
          // The tool is gone: its end is the exec's end, for idle time too.
          ended?.();
          const said = asCallerSays(await leaseLostFrame(client, namespace, name, frame));
          await writeWithBackpressure(res, said);
        } else await writeWithBackpressure(res, `${frame}\n\n`);
      }
    }
    const rest = frames.rest();
    if (rest.length > 0 && !res.destroyed) await writeWithBackpressure(res, rest);
    outcome(leaseLost ? 'lease-lost' : 'streamed');
  } catch {
    outcome(upstream.signal.aborted ? 'client-gone' : 'agent-gone');
  } finally {
    ended?.();
  }
  res.end();
}

type Found =
  | { lease: LeaseObject }
  | { refusal: { outcome: ExecOutcome; code: 'NOT_FOUND' | 'LEASE_NOT_ACTIVE'; message: string } };

/**
 * The granted Lease of request namespace/name, read with the proxy's own credentials where the
 * request's status says it is (else, from a controller before ADR 0034, beside the request under
 * its name); or why there is none, naming the lease as its holder knows it.
 */
async function grantedLease(client: KubeClient, namespace: string, name: string): Promise<Found> {
  const notActive = (why: string): Found => ({
    refusal: {
      outcome: 'not-active',
      code: 'LEASE_NOT_ACTIVE',
      message: `lease ${namespace}/${name} is not granted (${why})`,
    },
  });
  let request;
  try {
    request = LeaseRequestObject.safeParse(
      await client.get(simlockPath('leaseRequest', { namespace, name })),
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return {
      refusal: {
        outcome: 'not-found',
        code: 'NOT_FOUND',
        message: `lease ${namespace}/${name} does not exist`,
      },
    };
  }
  if (!request.success) return notActive('unreadable');
  if (request.data.status?.phase !== 'Granted')
    return notActive(request.data.status?.phase ?? 'Pending');
  let lease;
  try {
    lease = LeaseObject.safeParse(
      await client.get(simlockPath('lease', leaseOfRequest(request.data))),
    );
  } catch (error) {
    if (!isNotFound(error)) throw error;
    // Granted, its Lease already gone: released, the request not yet written so.
    return notActive('its Lease is gone');
  }
  if (!lease.success) return notActive('unreadable');
  if (lease.data.status?.phase !== 'Granted')
    return notActive(lease.data.status?.phase ?? 'Pending');
  return { lease: lease.data };
}

/**
 * Says the lease as its holder knows it (its request's namespace/name) in what the agent wrote of
 * the Lease's own (`lease <namespace>/<name> …`), when the two differ.
 */
function callerWording(leaseSaid: string, callerSays: string): (text: string) => string {
  if (leaseSaid === callerSays) return (text) => text;
  return (text) => text.split(leaseSaid).join(callerSays);
}
