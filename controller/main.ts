// simlock-controller: the process. Flags, leader election, health and metrics endpoints.
//   node --import tsx controller/main.ts --namespace simlock-system [--kubeconfig FILE]
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { z } from 'zod';
import { parseDuration } from '../api/index.js';
import {
  KubeClient,
  LeaderElector,
  createLogger,
  startupRefusal,
  systemClock,
  userAgent,
} from '../runtime/index.js';
import { ApiContact } from './api-contact.js';
import { CONTROLLER_DEFAULTS as DEFAULTS } from './options.js';
import { ControllerMetrics } from './metrics.js';
import { LEADER_LEASE_NAME, controllerPermissions } from './permissions.js';
import { Reconciler } from './reconciler.js';

const Options = z.object({
  kubeconfig: z.string().optional(),
  context: z.string().optional(),
  namespace: z.string().min(1).max(63),
  watchNamespace: z.string().max(63).optional(),
  workerSelector: z.string().max(1024).optional(),
  listen: z.string().regex(/^[^:]*:\d+$/, 'listen must be host:port'),
  dispatchTimeoutMs: z.number().int().min(100).max(600_000),
  grantTimeoutMs: z.number().int().min(1000).max(3_600_000),
  reasonWriteIntervalMs: z.number().int().min(0).max(60_000),
  dispatchEventHoldMs: z.number().int().min(0).max(600_000).optional(),
  grantEventsPerSecond: z.number().min(0).max(100_000),
  leaseDurationSeconds: z.number().int().min(2).max(300),
  identity: z.string().min(1).max(253),
  leaderElection: z.boolean(),
  kubeApiQps: z.number().min(0).max(100_000),
  maxConcurrentWrites: z.number().int().min(1).max(1000),
  progressWritesPerSecond: z.number().min(0).max(100_000),
  kubeApiBurst: z.number().int().min(0).max(100_000),
  maxLeaseDuration: durationFlag(60, 604_800),
  expiringSoonBefore: durationFlag(0, 86_400),
  usagePublishInterval: durationFlag(0, 3600),
});

/** A duration flag (24h, 90m, 300): whole seconds within the bounds. */
function durationFlag(min: number, max: number) {
  return z.union([z.string(), z.number()]).transform((value, context) => {
    const seconds = typeof value === 'number' ? value : parseDuration(value);
    if (seconds === undefined || !Number.isInteger(seconds) || seconds < min || seconds > max) {
      context.addIssue({
        code: 'custom',
        message: `must be a duration such as 24h or 90m, from ${min}s to ${max}s`,
      });
      return z.NEVER;
    }
    return seconds;
  });
}

async function main(): Promise<void> {
  const argv = await yargs(hideBin(process.argv))
    .scriptName('simlock-controller')
    // A flag given twice takes its last value, as Go's flag package has it: the chart's
    // controller.extraArgs come after its own flags and so may override them.
    .parserConfiguration({ 'duplicate-arguments-array': false })
    .option('kubeconfig', {
      type: 'string',
      describe: 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster)',
    })
    .option('context', { type: 'string' })
    .option('namespace', {
      type: 'string',
      default: DEFAULTS.namespace,
      describe: "where heartbeats and the leader's Lease live",
    })
    .option('watch-namespace', {
      type: 'string',
      describe: 'only LeaseRequests in this namespace (default: all)',
    })
    .option('worker-selector', { type: 'string', describe: 'only Workers with these labels' })
    .option('listen', {
      type: 'string',
      default: DEFAULTS.listen,
      describe: 'address of /healthz, /readyz and /metrics',
    })
    .option('dispatch-timeout-ms', { type: 'number', default: DEFAULTS.dispatchTimeoutMs })
    .option('grant-timeout-ms', {
      type: 'number',
      default: DEFAULTS.grantTimeoutMs,
      describe: 'how long an agent that acknowledged a lease may take to grant it (cold boots)',
    })
    .option('reason-write-interval-ms', {
      type: 'number',
      default: DEFAULTS.reasonWriteIntervalMs,
    })
    .option('dispatch-event-hold-ms', {
      type: 'number',
      describe:
        'a grant within this of its dispatch is one Event (default: the dispatch timeout); 0: a Dispatched Event for every dispatch at once',
    })
    .option('grant-events-per-second', {
      type: 'number',
      default: DEFAULTS.grantEventsPerSecond,
      describe:
        "a plain grant's Event at most this often (a burst of 10 s worth); past it the request's status tells the grant (0: every grant its Event)",
    })
    .option('lease-duration-seconds', {
      type: 'number',
      default: DEFAULTS.leaseDurationSeconds,
      describe: 'leader election lease',
    })
    .option('identity', { type: 'string', default: `${hostname()}-${process.pid}` })
    .option('leader-election', { type: 'boolean', default: DEFAULTS.leaderElection })
    .option('kube-api-qps', {
      type: 'number',
      default: DEFAULTS.kubeApiQps,
      describe: 'requests per second to the API server, as kube-scheduler has it (0: unlimited)',
    })
    .option('max-concurrent-writes', {
      type: 'number',
      default: DEFAULTS.maxConcurrentWrites,
      describe: 'writes to the API server in flight at once (dispatches and outcomes go first)',
    })
    .option('progress-writes-per-second', {
      type: 'number',
      default: DEFAULTS.progressWritesPerSecond,
      describe:
        "waiting requests' reason and position writes per second, all together (0: no limit)",
    })
    .option('max-lease-duration', {
      type: 'string',
      default: `${DEFAULTS.maxLeaseMs / 3_600_000}h`,
      describe: 'the longest a lease may live, extensions included (the chart admits no more)',
    })
    .option('expiring-soon-before', {
      type: 'string',
      default: `${DEFAULTS.expiringSoonMs / 60_000}m`,
      describe: 'mark a lease ExpiringSoon (condition and Event) this long before expiry; 0: never',
    })
    .option('usage-publish-interval', {
      type: 'string',
      default: `${DEFAULTS.usagePublishIntervalMs / 1000}s`,
      describe:
        'write the last day of waits and utilisation into the ConfigMap simlock-usage this often, for the console (0: never)',
    })
    .option('kube-api-burst', {
      type: 'number',
      default: DEFAULTS.kubeApiBurst,
      describe: 'requests that may go at once above the qps (0: twice the qps)',
    })
    .strict()
    .parseAsync();
  const parsed = Options.safeParse(argv);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    console.error(
      `simlock-controller: --${String(issue?.path[0] ?? '')}: ${issue?.message ?? 'invalid'}`,
    );
    process.exit(2);
  }
  const options = parsed.data;
  const log = createLogger({ component: 'controller', identity: options.identity });
  const clock = systemClock();
  // The limit covers the reconciler's reads, writes and watches; leader election has its own client
  // so that renewing the lease never waits behind a queue of status writes.
  const rateLimit =
    options.kubeApiQps > 0
      ? {
          qps: options.kubeApiQps,
          burst: options.kubeApiBurst || Math.ceil(options.kubeApiQps * 2),
        }
      : undefined;
  const connection = {
    kubeconfig: options.kubeconfig,
    context: options.context,
    userAgent: userAgent('simlock-controller'),
  };
  const client = KubeClient.fromOptions(connection, undefined, rateLimit);
  // Events have a client of their own with the same limit, as kube-scheduler's do.
  const eventClient = rateLimit ? KubeClient.fromOptions(connection, undefined, rateLimit) : client;
  const metrics = new ControllerMetrics(true);

  // Told by the leader election's renewals; with none, heartbeat lapses are judged as they fall due.
  const apiContact = options.leaderElection ? new ApiContact() : undefined;
  let reconciler: Reconciler | undefined;
  const startReconciling = () => {
    reconciler = new Reconciler({
      client,
      eventClient,
      clock,
      log,
      metrics,
      systemNamespace: options.namespace,
      apiContact,
      watchNamespace: options.watchNamespace,
      workerSelector: options.workerSelector,
      dispatchTimeoutMs: options.dispatchTimeoutMs,
      grantTimeoutMs: options.grantTimeoutMs,
      reasonWriteIntervalMs: options.reasonWriteIntervalMs,
      dispatchEventHoldMs: options.dispatchEventHoldMs,
      grantEventsPerSecond: options.grantEventsPerSecond,
      maxConcurrentWrites: options.maxConcurrentWrites,
      progressWritesPerSecond: options.progressWritesPerSecond,
      identity: options.identity,
      maxLeaseMs: options.maxLeaseDuration * 1000,
      expiringSoonMs: options.expiringSoonBefore * 1000,
      usagePublishIntervalMs: options.usagePublishInterval * 1000,
    });
    reconciler.start().catch((error: unknown) => {
      log.error('reconciler failed to start', { error });
      process.exit(1);
    });
  };

  const elector = options.leaderElection
    ? new LeaderElector({
        renewals: apiContact,
        client: KubeClient.fromOptions(connection),
        namespace: options.namespace,
        name: LEADER_LEASE_NAME,
        identity: options.identity,
        clock,
        log,
        leaseDurationSeconds: options.leaseDurationSeconds,
        onStartedLeading: startReconciling,
        // A leader that lost its lease must not act on stale memory: exit and start afresh.
        onStoppedLeading: () => {
          log.error('lost leadership; exiting so a fresh process starts from the API');
          process.exit(1);
        },
      })
    : undefined;

  const [host, port] = [
    options.listen.slice(0, options.listen.lastIndexOf(':')),
    Number(options.listen.slice(options.listen.lastIndexOf(':') + 1)),
  ];
  const server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200).end('ok');
    } else if (req.url === '/readyz') {
      const ready = reconciler?.ready === true || (elector !== undefined && !elector.isLeader);
      res.writeHead(ready ? 200 : 503).end(ready ? 'ok' : 'not ready');
    } else if (req.url === '/leader') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ leader: elector ? elector.isLeader : true }));
    } else if (req.url === '/metrics') {
      metrics.registry
        .metrics()
        .then((text) =>
          res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
        )
        .catch(() => res.writeHead(500).end());
    } else {
      res.writeHead(404).end();
    }
  });
  server.listen(port, host || '0.0.0.0', () => {
    const address = server.address();
    log.info('listening', {
      address:
        typeof address === 'object' && address
          ? `${address.address}:${address.port}`
          : options.listen,
    });
  });

  const shutdown = async () => {
    log.info('shutting down');
    await reconciler?.stop();
    await elector?.stop();
    server.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());

  // Listening already (so /healthz answers while an unreachable API server is waited for), but
  // nothing started: a controller short of a permission says which and exits, instead of
  // retrying forbidden requests for ever.
  const refusal = await startupRefusal(
    'simlock-controller',
    client,
    controllerPermissions({
      systemNamespace: options.namespace,
      watchNamespace: options.watchNamespace,
      leaderElection: options.leaderElection,
      publishUsage: options.usagePublishInterval > 0,
    }),
    log,
  );
  if (refusal) {
    for (const line of refusal) console.error(line);
    process.exit(1);
  }
  if (elector) elector.start();
  else startReconciling();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
