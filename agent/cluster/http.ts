// The agent's HTTP surfaces. The exec server runs one tool on one leased device for the exec proxy
// (verified by TokenReview, ADR 0003) and streams its output as Server-Sent Events; a tool that
// does not fit the lease is refused with a code and an HTTP status before anything runs. The local
// API lets programs on this host lease without the cluster, in the agent's own queue.
import express, { type Request, type Response } from 'express';
import { z } from 'zod';
import {
  AgentExecRequest,
  DeviceSpec,
  DeviceState,
  MAX_EXEC_BODY_BYTES,
  sseFrame,
} from '../../api/index.js';
import {
  MetricSet,
  metricsHandler,
  sendError,
  startEventStream,
  writeWithBackpressure,
  type Logger,
} from '../../runtime/index.js';
import type { AgentConfig } from '../config.js';
import type { AgentCore } from '../core.js';
import type { LeaseDeviceHealth } from '../device-health.js';
import { execStream } from '../exec.js';
import { leaseKey, type ClusterAgent } from './agent.js';
import type { TokenVerifier } from './token-verifier.js';

export class AgentMetrics extends MetricSet {
  readonly execs = this.counter('simlock_agent_execs_total', 'Exec calls by outcome.', ['outcome']);

  /**
   * `simlock_agent_devices{state}`: the devices of the Worker's view by state, read at each scrape
   * (quarantined ones are what an operator is asked to look at, docs/OPERATIONS.md).
   */
  watchDevices(core: Pick<AgentCore, 'status' | 'recovery'>): void {
    // `simlock_agent_device_recoveries_total{event}`: a leased device crashed (and is booted
    // again), came back, or lost its lease (docs/OPERATIONS.md, a crashing device).
    const recoveries = this.counter(
      'simlock_agent_device_recoveries_total',
      'Leased devices that crashed and were booted again, came back, or lost their lease.',
      ['event'],
    );
    for (const event of RECOVERY_EVENTS) recoveries.inc({ event }, 0);
    core.recovery.news.add(({ leaseId }) => {
      const event = recoveryEventOf(core.recovery.healthOf(leaseId));
      if (event !== undefined) recoveries.inc({ event });
    });
    const devices = this.gauge(
      'simlock_agent_devices',
      "Devices in the Worker's view, by state.",
      ['state'],
      () => {
        devices.reset();
        for (const state of DeviceState.options) devices.set({ state }, 0);
        for (const device of core.status().devices) devices.inc({ state: device.state });
      },
    );
  }
}

const RECOVERY_EVENTS = ['crashed', 'recovered', 'lost'] as const;

/** Which step of a recovery a lease's news is (the crash recovery tells each once). */
export function recoveryEventOf(
  health: LeaseDeviceHealth | undefined,
): (typeof RECOVERY_EVENTS)[number] | undefined {
  if (health === undefined) return undefined;
  if (health.lost !== undefined) return 'lost';
  if (health.condition?.status === 'True') return 'crashed';
  if (health.condition?.reason === 'DeviceRecovered') return 'recovered';
  return undefined;
}

export interface AgentHttpOptions {
  agent: ClusterAgent;
  core: AgentCore;
  config: AgentConfig;
  verifyToken: TokenVerifier;
  log: Logger;
  metrics: AgentMetrics;
}

export function createExecApp(options: AgentHttpOptions): express.Express {
  const { agent, core, config, verifyToken, log, metrics } = options;
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    const health = core.status().health;
    res
      .status(health === 'unhealthy' ? 503 : 200)
      .type('text')
      .send(health);
  });
  app.get('/metrics', metricsHandler(metrics.registry));

  app.post(
    '/v1/exec',
    express.json({ limit: MAX_EXEC_BODY_BYTES, type: () => true }),
    (req: Request, res: Response) => {
      void (async () => {
        const token = /^Bearer\s+(\S{1,16384})$/i.exec(req.headers.authorization ?? '')?.[1];
        if (!token) return sendError(res, 'UNAUTHENTICATED', 'a bearer token is required');
        let caller: string | undefined;
        try {
          caller = await verifyToken(token);
        } catch (error) {
          log.warn('token review failed', { error });
          return sendError(
            res,
            'UNAVAILABLE',
            'the caller could not be verified: the API server is unreachable',
          );
        }
        if (!caller) {
          metrics.execs.inc({ outcome: 'forbidden' });
          return sendError(res, 'FORBIDDEN', 'only the exec proxy may run tools here');
        }
        const body = AgentExecRequest.safeParse(req.body);
        if (!body.success) {
          const issue = body.error.issues[0];
          return sendError(
            res,
            'INVALID_REQUEST',
            `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
          );
        }
        const { namespace, lease, tool, args, timeoutSeconds, encoding } = body.data;
        if (!agent.grantedLease(namespace, lease)) {
          metrics.execs.inc({ outcome: 'not-active' });
          return sendError(
            res,
            'LEASE_NOT_ACTIVE',
            `lease ${namespace}/${lease} is not granted on ${agent.name}`,
          );
        }
        const plan = core.execArgv(leaseKey(namespace, lease), tool, args);
        if (!plan.ok) {
          metrics.execs.inc({ outcome: 'refused' });
          return sendError(res, plan.code, plan.message);
        }
        const timeoutMs =
          Math.min(
            timeoutSeconds ?? config.exec.defaultTimeoutSeconds,
            config.exec.maxTimeoutSeconds,
          ) * 1000;
        const callerGone = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) callerGone.abort();
        });
        log.info('exec', { caller, lease: `${namespace}/${lease}`, argv: plan.argv });
        // Tracked from before it starts (nothing is awaited since the lease was checked): a lease
        // that ends stops it, and its device is reclaimed only once it is gone.
        const tracked = core.execs.track(leaseKey(namespace, lease));
        startEventStream(res);
        try {
          for await (const event of execStream(plan.argv, {
            signal: callerGone.signal,
            leaseEnded: tracked.leaseEnded,
            onExited: tracked.exited,
            timeoutMs,
            ...(encoding ? { encoding } : {}),
          })) {
            if (res.destroyed) break;
            const frame =
              event.type === 'output'
                ? sseFrame('output', { stream: event.stream, data: event.data })
                : event.type === 'exit'
                  ? sseFrame('exit', { exitCode: event.exitCode })
                  : sseFrame('error', { code: event.code, message: event.message });
            // Backpressure: a slow reader pauses the reading of the tool's output.
            await writeWithBackpressure(res, frame);
          }
        } finally {
          tracked.exited();
        }
        // Stopped with UNAVAILABLE: the device crashed under the lease (crash-recovery.ts).
        const crashed =
          (tracked.leaseEnded.reason as { code?: unknown } | undefined)?.code === 'UNAVAILABLE';
        metrics.execs.inc({
          outcome: callerGone.signal.aborted
            ? 'caller-gone'
            : tracked.leaseEnded.aborted
              ? crashed
                ? 'device-crashed'
                : 'lease-lost'
              : 'ran',
        });
        if (tracked.leaseEnded.aborted)
          log.info(crashed ? 'exec stopped: its device crashed' : 'exec stopped: its lease ended', {
            lease: `${namespace}/${lease}`,
          });
        res.end();
      })().catch((error: unknown) => {
        log.error('exec failed', { error });
        sendError(res, 'INTERNAL', 'the agent failed to run the tool');
        if (!res.writableEnded) res.end();
      });
    },
  );

  app.use((error: unknown, _req: Request, res: Response, next: (error?: unknown) => void) => {
    const status = (error as { status?: number }).status;
    if (status === 413 || status === 400)
      return sendError(
        res,
        'INVALID_REQUEST',
        status === 413 ? 'the body is too large' : 'the body is not valid JSON',
      );
    next(error);
  });
  return app;
}

const LocalLeaseRequest = DeviceSpec.extend({
  holder: z.string().max(100).default('local'),
  noWait: z.boolean().optional(),
  waitTimeoutSeconds: z.number().int().min(1).max(86_400).default(300),
  durationSeconds: z.number().int().min(1).max(604_800).default(3600),
});

/** The local leasing API: loopback only by default. A request waits until granted or failed. */
export function createLocalApp(options: { core: AgentCore; log: Logger }): express.Express {
  const { core, log } = options;
  const app = express();
  app.disable('x-powered-by');
  let sequence = 0;
  app.post(
    '/v1/local/leases',
    express.json({ limit: 16 * 1024, type: () => true }),
    (req: Request, res: Response) => {
      const body = LocalLeaseRequest.safeParse(req.body);
      if (!body.success) {
        const issue = body.error.issues[0];
        return sendError(
          res,
          'INVALID_REQUEST',
          `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`,
        );
      }
      const { holder, noWait, waitTimeoutSeconds, durationSeconds, ...spec } = body.data;
      const id = `local-${Date.now().toString(36)}-${++sequence}`;
      const entry = core.requestLocal({
        id,
        holder,
        spec,
        ...(noWait ? { noWait } : {}),
        waitTimeoutMs: waitTimeoutSeconds * 1000,
        durationMs: durationSeconds * 1000,
      });
      // A caller that hangs up while waiting withdraws its request.
      res.on('close', () => {
        if (!res.writableFinished) core.cancelLocal(id);
      });
      entry.outcome
        .then((outcome) => {
          if (outcome.kind === 'granted') {
            res
              .status(200)
              .json({ lease: id, device: outcome.lease.device, source: outcome.lease.source });
          } else {
            sendError(res, outcome.error.code, outcome.error.message, outcome.error.details);
          }
        })
        .catch((error: unknown) => {
          log.error('local lease failed', { error });
          sendError(res, 'INTERNAL', 'the local lease failed');
        });
    },
  );
  // `simlock device remove <id>`, run on the host: a physical device unplugged for good is
  // forgotten, so it is no longer an enrolled match (a waiting request for it fails UNKNOWN_MODEL).
  app.delete('/v1/local/devices/:id', (req: Request<{ id: string }>, res: Response) => {
    const id = req.params.id;
    if (id.length > 128) return sendError(res, 'INVALID_REQUEST', 'not a device id');
    if (!core.status().devices.some((device) => device.id === id))
      return sendError(res, 'NOT_FOUND', `no device ${id}`);
    core.forgetDevice(id);
    res.status(200).json({ removed: id });
  });
  app.delete('/v1/local/leases/:id', (req: Request<{ id: string }>, res: Response) => {
    const id = req.params.id;
    if (!/^local-[a-z0-9-]{1,64}$/.test(id))
      return sendError(res, 'INVALID_REQUEST', 'not a local lease id');
    if (core.cancelLocal(id)) {
      res.status(200).json({ released: id, wasWaiting: true });
      return;
    }
    core
      .reclaim(id)
      .then((outcome) => {
        if (outcome === 'not-leased') sendError(res, 'NOT_FOUND', `no local lease ${id}`);
        else res.status(200).json({ released: id, outcome });
      })
      .catch((error: unknown) => {
        log.error('local release failed', { error });
        sendError(res, 'INTERNAL', 'the release failed');
      });
  });
  return app;
}
