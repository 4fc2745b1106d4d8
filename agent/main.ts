// simlock-agent: the device-host daemon.
//   node --import tsx agent/main.ts --config agent.yaml [--name mac-mini-1] [--kubeconfig FILE]
// Flags override the config file field by field (see docs/AGENT.md).
//   node --import tsx agent/main.ts doctor --config agent.yaml [--fix] [-o json]
// checks (and repairs) the agent's own devices and files on this host (doctor-command.ts).
import { createServer } from 'node:http';
import express from 'express';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import {
  KubeClient,
  createLogger,
  kubeconfigBearerToken,
  metricsHandler,
  systemClock,
  userAgent,
  workQueueMetrics,
} from '../runtime/index.js';
import { AgentConfigError, loadAgentConfig } from './config.js';
import { AgentCore } from './core.js';
import { createCommandRunner } from './drivers/command.js';
import { createDriver } from './drivers/create.js';
import { readProcessTable } from './device-memory.js';
import { ModelRam } from './model-ram.js';
import { modelRamPath, modelRamWriter, readModelRam } from './model-ram-file.js';
import { resolveDataDir } from './data-dir.js';
import { StageTimings } from './stage-timings.js';
import { readStageTimings, stageTimingsPath, stageTimingsWriter } from './stage-timings-file.js';
import { ClusterAgent } from './cluster/agent.js';
import { AgentMetrics, createExecApp, createLocalApp } from './cluster/http.js';
import { tokenReviewVerifier } from './cluster/token-verifier.js';
import { AgentTunnel, tunnelMetric } from './cluster/tunnel-client.js';
import { ListenError, listen } from './listen.js';
import { TlsFilesError, createTlsServer } from './exec-tls.js';
import { AGENT_VERSION } from './view.js';
import { removePidFile, writePidFile } from './agent-pid.js';
import { doctorCommand } from './doctor-command.js';

async function main(): Promise<void> {
  // The doctor is a command of its own; without one the daemon runs, with its flags as ever.
  if (process.argv[2] === 'doctor') {
    const io = {
      out: (text: string) => process.stdout.write(text),
      err: (text: string) => process.stderr.write(text),
    };
    process.exitCode = await doctorCommand(hideBin(process.argv).slice(1), io);
    return;
  }
  const argv = await yargs(hideBin(process.argv))
    .scriptName('simlock-agent')
    .epilogue('simlock-agent doctor --help: check and repair the agent’s own devices and files')
    .option('config', { type: 'string', describe: 'config file (YAML or JSON)' })
    .option('kubeconfig', { type: 'string' })
    .option('context', { type: 'string' })
    .option('name', { type: 'string', describe: 'the Worker this agent reports as' })
    .option('label', { type: 'string' })
    .option('namespace', { type: 'string', describe: 'where the heartbeat Lease lives' })
    .option('driver', { type: 'array', string: true, describe: 'simctl, devicectl, adb, fake' })
    .option('fake-script', { type: 'string' })
    .option('endpoint', {
      type: 'string',
      describe: 'the exec URL the proxy reaches this agent at',
    })
    .option('tunnel-url', {
      type: 'string',
      describe: 'the exec proxy to connect out to (a host behind NAT; ADR 0024)',
    })
    .option('tunnel-ca-file', {
      type: 'string',
      describe: "the CA (PEM) that signed the proxy's certificate, if the system does not trust it",
    })
    .option('tunnel-allow-plain-http', {
      type: 'boolean',
      describe:
        'connect over plain http:// to a proxy off this host (a local demo: the token is sent unencrypted)',
    })
    .option('tls-cert-file', {
      type: 'string',
      describe: 'serve exec over HTTPS with this certificate (PEM; read again when it changes)',
    })
    .option('tls-key-file', { type: 'string', describe: "the certificate's private key (PEM)" })
    .option('listen-port', { type: 'number', describe: 'exec server port (0: any free port)' })
    .option('local-port', { type: 'number', describe: 'local leasing API port on loopback' })
    .option('probe-interval-ms', { type: 'number' })
    .option('view-debounce-ms', { type: 'number' })
    .option('worker-label', {
      type: 'array',
      string: true,
      describe: 'key=value labels for the Worker',
    })
    .option('exec-allowed-identity', { type: 'array', string: true })
    .strict()
    .parseAsync();

  const labels = Object.fromEntries(
    (argv['worker-label'] ?? []).map((pair) => [
      pair.slice(0, pair.indexOf('=')),
      pair.slice(pair.indexOf('=') + 1),
    ]),
  );
  const flags = {
    name: argv.name,
    label: argv.label,
    namespace: argv.namespace,
    drivers: argv.driver,
    fakeScript: argv['fake-script'],
    endpoint: argv.endpoint,
    probeIntervalMs: argv['probe-interval-ms'],
    viewDebounceMs: argv['view-debounce-ms'],
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
    ...(argv['exec-allowed-identity']
      ? { execAllowedIdentities: argv['exec-allowed-identity'] }
      : {}),
    ...(argv['tls-cert-file'] !== undefined || argv['tls-key-file'] !== undefined
      ? { tls: { certFile: argv['tls-cert-file'], keyFile: argv['tls-key-file'] } }
      : {}),
    ...(argv['listen-port'] !== undefined ? { listen: { port: argv['listen-port'] } } : {}),
    ...tunnelFlags(argv),
    ...(argv['local-port'] !== undefined ? { local: { port: argv['local-port'] } } : {}),
  };
  let config;
  try {
    config = await loadAgentConfig({ ...(argv.config ? { path: argv.config } : {}), flags });
  } catch (error) {
    if (error instanceof AgentConfigError) {
      console.error(`simlock-agent: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }

  const clock = systemClock();
  const log = createLogger({ component: 'agent', worker: config.name });
  const client = KubeClient.fromOptions({
    kubeconfig: argv.kubeconfig,
    context: argv.context,
    userAgent: userAgent('simlock-agent'),
  });
  const metrics = new AgentMetrics(true);

  // The exec server listens first: its address is the endpoint written in the Worker. Its routes
  // are mounted once the agent exists (express takes routes after listen).
  const dataDir = resolveDataDir({ dataDir: config.dataDir });
  // Tells `simlock-agent doctor --fix` that an agent uses this data directory.
  await writePidFile(dataDir).catch((error: unknown) => {
    log.warn('cannot write the pid file; doctor --fix will not know this agent runs', { error });
  });
  // Signals are taken from the moment the pid file exists: an agent stopped while it starts (its
  // Worker may already read running) removes the file too, and stops what it has started.
  let stopRunning = (): Promise<void> => Promise.resolve();
  const shutdown = async () => {
    log.info('shutting down');
    await stopRunning().catch((error: unknown) => log.warn('stopping failed', { error }));
    await removePidFile(dataDir).catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  const driver = await createDriver(config, { clock, dataDir });
  const timingsPath = stageTimingsPath(dataDir);
  const stageTimings = new StageTimings(
    await readStageTimings(timingsPath, log),
    stageTimingsWriter(timingsPath, log),
  );
  // Simulators and emulators are measured; the fake driver's devices have no processes.
  const measuresRam = config.drivers.some((name) => name === 'simctl' || name === 'adb');
  const ramPath = modelRamPath(dataDir);
  const deviceRam = measuresRam
    ? {
        models: new ModelRam(await readModelRam(ramPath, log), modelRamWriter(ramPath, log)),
        readProcesses: () => readProcessTable(createCommandRunner()),
      }
    : undefined;
  const execApp = express();
  // Behind NAT (a tunnel and no endpoint): the exec server listens on no port; the tunnel hands it
  // each stream the proxy opens as a connection (inside the tunnel's own TLS). Otherwise HTTPS with
  // the configured certificate; without one, plain HTTP, which proxies refuse unless they run with
  // --allow-plain-http-agents (docs/adr/0025-agent-tls.md; said once running).
  const tunnelOnly = config.tunnel !== undefined && config.endpoint === undefined;
  const execServer = tunnelOnly
    ? createServer(execApp)
    : await listen(
        execApp,
        { ...config.listen, what: 'the exec server', setting: 'listen.port (--listen-port)' },
        ...(config.tls ? [createTlsServer(execApp, config.tls, log)] : []),
      );
  let endpoint = config.endpoint;
  if (!tunnelOnly && endpoint === undefined) {
    const address = execServer.address();
    const port = typeof address === 'object' && address ? address.port : config.listen.port;
    const host = config.listen.host === '0.0.0.0' ? '127.0.0.1' : config.listen.host;
    endpoint = `${config.tls ? 'https' : 'http'}://${host}:${port}`;
  }
  const finalConfig = { ...config, endpoint };

  const core = new AgentCore({
    config: finalConfig,
    driver,
    clock,
    logger: log,
    agentVersion: AGENT_VERSION,
    stageTimings,
    dataDir,
    ...(deviceRam ? { deviceRam } : {}),
  });
  metrics.watchDevices(core);
  const agent = new ClusterAgent({
    client,
    core,
    config: finalConfig,
    clock,
    log,
    queueMetrics: workQueueMetrics(metrics.registry),
  });
  const verifyToken = tokenReviewVerifier(client, finalConfig.execAllowedIdentities);
  execApp.use(createExecApp({ agent, core, config: finalConfig, verifyToken, log, metrics }));
  const localApp = createLocalApp({ core, log });
  // Behind NAT no exec port serves /metrics: the loopback local API does, for a scraper on the host
  // (the fleet-wide view of tunnels is the Worker status and the proxy's metrics).
  if (tunnelOnly) localApp.get('/metrics', metricsHandler(metrics.registry));
  const localServer = await listen(localApp, {
    ...finalConfig.local,
    what: 'the local leasing API',
    setting: 'local.port (--local-port)',
  });
  const localAddress = localServer.address();
  const tunnel = config.tunnel
    ? new AgentTunnel({
        url: config.tunnel.url,
        ...(config.tunnel.caFile !== undefined ? { caFile: config.tunnel.caFile } : {}),
        worker: config.name,
        token: () => kubeconfigBearerToken(client),
        server: execServer,
        log,
        onState: (state) => core.setTunnel(state),
      })
    : undefined;
  if (tunnel) tunnelMetric(metrics.registry, tunnel);
  stopRunning = async () => {
    tunnel?.stop();
    await agent.stop();
    execServer.close();
    localServer.close();
  };
  await agent.start();
  tunnel?.start();
  if (!config.tls && !tunnelOnly)
    log.warn(
      'no tls.certFile: the exec server speaks plain HTTP, which a proxy dials only with --allow-plain-http-agents (a local demo)',
    );
  log.info('agent running', {
    endpoint,
    ...(config.tunnel ? { tunnel: config.tunnel.url } : {}),
    local:
      typeof localAddress === 'object' && localAddress
        ? `${localAddress.address}:${localAddress.port}`
        : undefined,
  });
}

main().catch((error: unknown) => {
  // A port it cannot have is the config's to fix, as a bad value is: exit 2, one line.
  if (error instanceof ListenError || error instanceof TlsFilesError) {
    console.error(`simlock-agent: ${error.message}`);
    process.exit(2);
  }
  console.error(error);
  process.exit(1);
});

/** The tunnel's flags as the config's `tunnel` (merged over the file's). */
function tunnelFlags(argv: {
  'tunnel-url'?: string | undefined;
  'tunnel-ca-file'?: string | undefined;
  'tunnel-allow-plain-http'?: boolean | undefined;
}): { tunnel?: Record<string, unknown> } {
  const tunnel = {
    ...(argv['tunnel-url'] !== undefined ? { url: argv['tunnel-url'] } : {}),
    ...(argv['tunnel-ca-file'] !== undefined ? { caFile: argv['tunnel-ca-file'] } : {}),
    ...(argv['tunnel-allow-plain-http'] !== undefined
      ? { allowPlainHttp: argv['tunnel-allow-plain-http'] }
      : {}),
  };
  return Object.keys(tunnel).length > 0 ? { tunnel } : {};
}
